#version 450
#extension GL_GOOGLE_include_directive : enable
// Frequency separation, recombine: out = B + guard * (S - B)' + detail * (I - B), where
// I is the (spot-fixed) image, B its small-Gaussian low layer over the skin, I - B the high layer
// (pores, grain) and S the mask-aware heavy low-pass (the smoothed low layer). The guard
// fades the low-layer change out where S and B differ strongly (a shadow edge, the jaw
// line), so the smoothing evens out blotches without flattening real edges. (S - B)' is
// the luma part of S - B plus `chroma` times the rest. With BASE_ON_GRID, B's sums lie on a
// coarse grid (the base Gaussian 2.5 grid pixels or more wide) and are read through a linear
// sampler, as S's are.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int BASE_ON_GRID = 0;

layout(binding = 0) uniform sampler2D source;   // nearest: I
layout(binding = 1) uniform sampler2D base;     // B as normalised-convolution sums (rgb*m, m): nearest, linear on a grid
layout(binding = 2) uniform sampler2D smoothed; // linear: normalised-convolution sums (rgb*m, m)
layout(binding = 3) uniform sampler2D mask;     // linear
layout(binding = 4) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    vec2 inverseFrame;
    float detail;      // high-layer gain: 1 keeps all texture
    float guardFactor; // -1 / (2 guardRange^2)
    float chroma;      // share of the low layer's colour (not luma) change that is applied
    vec2 inverseGrid;  // 1 / (the low-pass grid's size x its factor): frame pixels to its coordinates
    vec2 inverseBaseGrid; // the same for B's grid (BASE_ON_GRID)
} parameters;

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        return;
    }
    vec4 original = texelFetch(source, pixel, 0);
    vec2 uv = (vec2(pixel) + 0.5) * parameters.inverseFrame;
    if (texture(mask, uv).r <= 0.0) {
        imageStore(destination, pixel, original);
        return;
    }
    vec4 baseSums = BASE_ON_GRID != 0 ? texture(base, (vec2(pixel) + 0.5) * parameters.inverseBaseGrid)
                                      : texelFetch(base, pixel, 0);
    vec3 low = baseSums.a > 1e-4 ? baseSums.rgb / baseSums.a : original.rgb;
    vec4 sums = texture(smoothed, (vec2(pixel) + 0.5) * parameters.inverseGrid);
    vec3 smoothLow = sums.a > 1e-4 ? sums.rgb / sums.a : low;
    float difference = beautyLuma(smoothLow) - beautyLuma(low);
    float guard = exp(difference * difference * parameters.guardFactor);
    vec3 evened = beautyScaleChroma(low, smoothLow, parameters.chroma);
    vec3 result = low + guard * (evened - low) + parameters.detail * (original.rgb - low);
    imageStore(destination, pixel, vec4(clamp(result, 0.0, 1.0), original.a));
}
