#version 450
#extension GL_GOOGLE_include_directive : enable
// Bilateral grid, splat step 1 of 2: along x. One invocation per (cell column, image row)
// gathers the pixels within one cell of its column (tent weight), binned by luma (tent),
// and writes one value per range bin. Gathering instead of scattering needs no atomics,
// and each pixel is read by two invocations only: the cost does not depend on the radius.
// Each pixel counts with its skin-mask value as weight (a mask-aware bilateral filter).
#include "beauty_common.glsl"
#include "beauty_grid_common.glsl"

layout(local_size_x = 8, local_size_y = 32) in;
const int MAX_BINS = 48;
// The range bins fixed per pipeline (CPU devices), or 0: `grid.bins` (GPUs). A CPU Vulkan
// indexes a local array by a variable lane by lane; with the count fixed, the loops unroll,
// the sums stay in registers and each pixel adds its share to every bin (0 to all but two).
layout(constant_id = 0) const int BINS = 0;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) uniform sampler2D mask;     // linear sampler: skin mask, the weight of each pixel
layout(binding = 2) writeonly uniform image2D destination; // (bins * gridSize.x) x size.y

void main() {
    int column = int(gl_GlobalInvocationID.x);
    int row = int(gl_GlobalInvocationID.y);
    if (column >= grid.gridSize.x || row >= grid.size.y) {
        return;
    }
    vec4 sums[MAX_BINS];
    int bins = BINS > 0 ? BINS : grid.bins;
    for (int b = 0; b < bins; ++b) {
        sums[b] = vec4(0.0);
    }
    float centre = float(column) * grid.cell;
    int first = max(0, int(ceil(centre - grid.cell)));
    int last = min(grid.size.x - 1, int(floor(centre + grid.cell)));
    int y = grid.origin.y + row;
    for (int x = first; x <= last; ++x) {
        ivec2 pixel = ivec2(grid.origin.x + x, y);
        // Weighted by the skin mask: eyes, brows, lips and background never bleed into skin.
        float w = (1.0 - abs(float(x) - centre) / grid.cell)
            * texture(mask, (vec2(pixel) + 0.5) * grid.inverseFrame).r;
        vec3 c = texelFetch(source, pixel, 0).rgb;
        int bin;
        float fraction;
        gridRange(beautyLuma(c), bin, fraction);
        vec4 value = vec4(c, 1.0) * w;
        if (BINS > 0) {
            for (int b = 0; b < BINS; ++b) {
                sums[b] += value * (b == bin ? 1.0 - fraction : b == bin + 1 ? fraction : 0.0);
            }
        } else {
            sums[bin] += value * (1.0 - fraction);
            sums[bin + 1] += value * fraction;
        }
    }
    for (int b = 0; b < bins; ++b) {
        imageStore(destination, ivec2(b * grid.gridSize.x + column, row), sums[b]);
    }
}
