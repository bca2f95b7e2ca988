// Bilateral grid layout shared by the beauty_grid_* kernels.
// The grid has gridSize.x x gridSize.y spatial cells (cell px apart, from the region's
// origin) and `bins` range cells (rangeCell of luma apart). It is stored in a 2D image as
// `bins` tiles side by side: texel (bin * gridSize.x + i, j) holds (sum w*rgb, sum w).
// Splatting and slicing are both linear (tent) in all three axes.

layout(push_constant) uniform GridParameters {
    ivec2 origin;      // region of interest in frame pixels
    ivec2 size;
    ivec2 gridSize;    // spatial cells
    float cell;        // px per spatial cell
    float rangeCell;   // luma per range cell
    int bins;          // range cells
    int axis;          // beauty_grid_blur: 0 = x, 1 = y, 2 = range
    int radius;        // beauty_grid_blur: taps each side
    float blurFactor;  // beauty_grid_blur: -1 / (2 sigma^2), sigma in cells
    vec2 inverseFrame; // beauty_grid_slice: 1 / frame size
    float chroma;      // beauty_grid_slice: share of the colour (not luma) change applied
} grid;

// Range coordinate of a luma: the lower bin and the fraction towards the next.
void gridRange(float luma, out int bin, out float fraction) {
    float z = clamp(luma, 0.0, 1.0) / grid.rangeCell;
    bin = min(int(z), grid.bins - 2);
    fraction = z - float(bin);
}
