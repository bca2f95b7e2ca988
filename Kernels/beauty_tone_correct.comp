#version 450
#extension GL_GOOGLE_include_directive : enable
// Takes back the part of the smoothing's change coarser than the tone scale: processed -=
// NC(processed - start), the skin-weighted low-pass of the change (sums rgb * m, m from
// beauty_nc_downsample.comp, blurred). The skin keeps its regional colour and brightness
// while its blotches even out. In place, over the region; pixels off the skin are left.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D change;  // linear: blurred sums of the change
layout(binding = 1) uniform sampler2D mask;    // linear
layout(binding = 2, rgba16f) uniform image2D processed;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    vec2 inverseFrame;
    vec2 inverseGrid;  // 1 / (the change grid's size x its factor): frame pixels to its coordinates
} parameters;

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        return;
    }
    vec2 uv = (vec2(pixel) + 0.5) * parameters.inverseFrame;
    vec4 sums = texture(change, (vec2(pixel) + 0.5) * parameters.inverseGrid);
    if (texture(mask, uv).r <= 0.0 || sums.a <= 1e-4) {
        return;
    }
    vec4 value = imageLoad(processed, pixel);
    imageStore(processed, pixel, vec4(value.rgb - sums.rgb / sums.a, value.a));
}
