#version 450
// The A/B view: the left half of the frame from A, the right half from B, a white divider,
// and a block "A" / "B" label in the top corners (5x7 glyphs scaled to the frame).

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D imageA;
layout(binding = 1) uniform sampler2D imageB;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;
    int split;     // first column taken from B
    int glyphScale;
} parameters;

// Rows of the 5x7 glyphs, top to bottom, bit 4 = leftmost column.
const uint GLYPH_A[7] = uint[7](14u, 17u, 17u, 31u, 17u, 17u, 17u);
const uint GLYPH_B[7] = uint[7](30u, 17u, 17u, 30u, 17u, 17u, 30u);

bool glyphCovers(ivec2 pixel, ivec2 origin, bool isA) {
    ivec2 cell = (pixel - origin) / parameters.glyphScale;
    if (any(lessThan(pixel, origin)) || cell.x >= 5 || cell.y >= 7) {
        return false;
    }
    uint row = isA ? GLYPH_A[cell.y] : GLYPH_B[cell.y];
    return ((row >> uint(4 - cell.x)) & 1u) != 0u;
}

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    bool fromB = pixel.x >= parameters.split;
    vec4 colour = fromB ? texelFetch(imageB, pixel, 0) : texelFetch(imageA, pixel, 0);
    int margin = 2 * parameters.glyphScale;
    ivec2 labelA = ivec2(margin, margin);
    ivec2 labelB = ivec2(parameters.size.x - margin - 5 * parameters.glyphScale, margin);
    // A dark box behind each label keeps it readable on any picture.
    ivec2 box = ivec2(5, 7) * parameters.glyphScale;
    bool inBoxA = all(greaterThanEqual(pixel, labelA - parameters.glyphScale)) && all(lessThan(pixel, labelA + box + parameters.glyphScale));
    bool inBoxB = all(greaterThanEqual(pixel, labelB - parameters.glyphScale)) && all(lessThan(pixel, labelB + box + parameters.glyphScale));
    if (inBoxA || inBoxB) {
        colour.rgb = mix(colour.rgb, vec3(0.0), 0.6);
    }
    if (glyphCovers(pixel, labelA, true) || glyphCovers(pixel, labelB, false) || abs(pixel.x - parameters.split) < max(1, parameters.glyphScale / 2)) {
        colour.rgb = vec3(1.0);
    }
    imageStore(destination, pixel, colour);
}
