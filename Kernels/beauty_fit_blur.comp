#version 450
#extension GL_GOOGLE_include_directive : enable
// Strength fit, step 2: one axis of a Gaussian over the atlas's r, g, b, inside each
// patch (edge replicated, as the metrics' CPU blur does), with that face's fine sigma into
// one destination and its middle sigma into the other (in samples; below 0.25 a copy), so
// the two blurs share each pass's dispatch. Alpha (the disc flag) is carried over.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D fineSource;   // nearest
layout(binding = 1) uniform sampler2D middleSource; // nearest
layout(binding = 2, rgba32f) readonly uniform imageBuffer paramTexels;
layout(binding = 3) writeonly uniform image2D fineDestination;
layout(binding = 4) writeonly uniform image2D middleDestination;

layout(push_constant) uniform Parameters {
    int faceCount;
    int vertical;
} parameters;

#include "beauty_fit_common.glsl"

// `cell` of `source` blurred along the pass's axis with `sigma`.
vec4 blurred(sampler2D source, ivec2 cell, int face, float sigma) {
    vec4 centre = texelFetch(source, cell, 0);
    if (sigma < 0.25) {
        return centre;
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
    return vec4(sum / total, centre.a);
}

void main() {
    ivec2 cell = ivec2(gl_GlobalInvocationID.xy);
    int face = cell.y / FIT_PATCH;
    if (face >= parameters.faceCount || cell.x >= FIT_DISCS * FIT_PATCH) {
        return;
    }
    imageStore(fineDestination, cell, blurred(fineSource, cell, face, fitFineSigma(face)));
    imageStore(middleDestination, cell, blurred(middleSource, cell, face, fitMiddleSigma(face)));
}
