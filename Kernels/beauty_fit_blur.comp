#version 450
#extension GL_GOOGLE_include_directive : enable
// Strength fit, step 2: one axis of a Gaussian over the atlas's r, g, b, inside each
// patch (edge replicated, as the metrics' CPU blur does) with that face's fine or middle
// sigma (in samples; below 0.25 a copy). Alpha (the disc flag) is carried over.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source; // nearest
layout(binding = 1) uniform samplerBuffer paramTexels;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    int faceCount;
    int vertical;
    int middle;    // 0: the fine sigma, 1: the middle sigma
} parameters;

#include "beauty_fit_common.glsl"

void main() {
    ivec2 cell = ivec2(gl_GlobalInvocationID.xy);
    int face = cell.y / FIT_PATCH;
    if (face >= parameters.faceCount || cell.x >= FIT_DISCS * FIT_PATCH) {
        return;
    }
    vec4 centre = texelFetch(source, cell, 0);
    float sigma = parameters.middle != 0 ? fitMiddleSigma(face) : fitFineSigma(face);
    if (sigma < 0.25) {
        imageStore(destination, cell, centre);
        return;
    }
    ivec2 patchOrigin = (cell / FIT_PATCH) * FIT_PATCH;
    int last = fitSamples(face) - 1;
    int along = parameters.vertical != 0 ? cell.y - patchOrigin.y : cell.x - patchOrigin.x;
    int radius = int(ceil(3.0 * sigma));
    vec3 sum = vec3(0.0);
    float total = 0.0;
    for (int d = -radius; d <= radius; ++d) {
        float x = float(d) / sigma;
        float w = exp(-0.5 * x * x);
        int at = clamp(along + d, 0, last);
        ivec2 q = parameters.vertical != 0 ? ivec2(cell.x, patchOrigin.y + at) : ivec2(patchOrigin.x + at, cell.y);
        sum += w * texelFetch(source, q, 0).rgb;
        total += w;
    }
    imageStore(destination, cell, vec4(sum / total, centre.a));
}
