#version 450
#extension GL_GOOGLE_include_directive : enable
// Brute-force bilateral filter, the quality reference for the fast grid: spatial Gaussian
// sigmaSpace over a (2R+1)^2 window (R = ceil(3 sigmaSpace)), range Gaussian sigmaRange
// on luma (Y'), applied to RGB, each neighbour also weighted by its skin-mask value (so
// features and background never bleed into skin). Cost grows with R^2; only pixels the
// skin mask touches are filtered, the rest are copied.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) uniform sampler2D mask;     // linear sampler
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    vec2 inverseFrame;
    int radius;
    float spatialFactor; // -1 / (2 sigmaSpace^2)
    float rangeFactor;   // -1 / (2 sigmaRange^2)
    float chroma;        // share of the colour (not luma) change applied
} parameters;

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        return;
    }
    vec4 centre = texelFetch(source, pixel, 0);
    if (texture(mask, (vec2(pixel) + 0.5) * parameters.inverseFrame).r <= 0.0) {
        imageStore(destination, pixel, centre);
        return;
    }
    ivec2 last = textureSize(source, 0) - 1;
    float centreLuma = beautyLuma(centre.rgb);
    vec3 sum = vec3(0.0);
    float total = 0.0;
    int r = parameters.radius;
    for (int dy = -r; dy <= r; ++dy) {
        for (int dx = -r; dx <= r; ++dx) {
            ivec2 at = clamp(pixel + ivec2(dx, dy), ivec2(0), last);
            vec3 c = texelFetch(source, at, 0).rgb;
            float difference = beautyLuma(c) - centreLuma;
            float w = exp(float(dx * dx + dy * dy) * parameters.spatialFactor
                          + difference * difference * parameters.rangeFactor)
                * texture(mask, (vec2(at) + 0.5) * parameters.inverseFrame).r;
            sum += w * c;
            total += w;
        }
    }
    vec3 filtered = total > 1e-8 ? sum / total : centre.rgb;
    imageStore(destination, pixel, vec4(beautyScaleChroma(centre.rgb, filtered, parameters.chroma), centre.a));
}
