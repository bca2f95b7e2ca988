#version 450
#extension GL_GOOGLE_include_directive : enable
// Bilateral grid, slice: each pixel reads the blurred grid at (x / cell, y / cell,
// luma / rangeCell) with trilinear interpolation (two bilinear fetches inside range tiles
// and a lerp) and divides by the accumulated weight. Pixels outside the skin mask copy.
#include "beauty_common.glsl"
#include "beauty_grid_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) uniform sampler2D gridImage; // linear sampler
layout(binding = 2) uniform sampler2D mask;     // linear sampler
layout(binding = 3) writeonly uniform image2D destination;

void main() {
    ivec2 local = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = grid.origin + local;
    if (any(greaterThanEqual(local, grid.size))) {
        return;
    }
    vec4 centre = texelFetch(source, pixel, 0);
    if (texture(mask, (vec2(pixel) + 0.5) * grid.inverseFrame).r <= 0.0) {
        imageStore(destination, pixel, centre);
        return;
    }
    vec2 cellPosition = vec2(local) / grid.cell;
    int bin;
    float fraction;
    gridRange(beautyLuma(centre.rgb), bin, fraction);
    vec2 inverseSize = 1.0 / vec2(textureSize(gridImage, 0));
    vec2 lower = (vec2(float(bin * grid.gridSize.x), 0.0) + cellPosition + 0.5) * inverseSize;
    vec2 upper = lower + vec2(float(grid.gridSize.x) * inverseSize.x, 0.0);
    vec4 value = mix(texture(gridImage, lower), texture(gridImage, upper), fraction);
    vec3 filtered = value.a > 1e-6 ? value.rgb / value.a : centre.rgb;
    imageStore(destination, pixel, vec4(beautyScaleChroma(centre.rgb, filtered, grid.chroma), centre.a));
}
