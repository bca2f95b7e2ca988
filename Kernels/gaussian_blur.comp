#version 450
#extension GL_GOOGLE_include_directive : enable
// One pass of a separable Gaussian blur (run horizontally, then vertically).
//
// Each invocation produces RUN consecutive outputs along the blur axis, so each texel it
// fetches feeds up to RUN outputs: fetches per output drop from 2r+1 to (2r+RUN)/RUN.
// Weights follow the recurrence w(d+1) = w(d) * ratio(d), ratio(d+1) = ratio(d) * q,
// exact for exp(-d^2 / 2 sigma^2), so the loop does no exp() and reads no weight memory
// (both are slow on lavapipe). The host passes the starting values and the normaliser,
// computed in double precision. Borders are replicated.
#include "common.glsl"

layout(local_size_x = 64) in;
const int RUN = 16;

layout(binding = 0) uniform sampler2D source;
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;
    int radius;
    int vertical;
    float firstWeight; // exp(-r^2 / 2 sigma^2): the weight at offset -r
    float firstRatio;  // w(-r+1) / w(-r) = exp((2r - 1) / 2 sigma^2)
    float q;           // exp(-1 / sigma^2)
    float normaliser;  // 1 / sum of all weights
} parameters;

void main() {
    bool vertical = parameters.vertical != 0;
    int radius = parameters.radius;
    int length = vertical ? parameters.size.y : parameters.size.x;
    int lines = vertical ? parameters.size.x : parameters.size.y;
    // Neighbouring invocations take neighbouring lines, so in the vertical pass a
    // subgroup's fetches of one row are adjacent in memory.
    int across = int(gl_GlobalInvocationID.x);
    int first = int(gl_GlobalInvocationID.y) * RUN;
    if (first >= length || across >= lines) {
        return;
    }
    vec4 sums[RUN];
    float weight[RUN];
    float ratio[RUN];
    for (int k = 0; k < RUN; ++k) {
        sums[k] = vec4(0.0);
        weight[k] = parameters.firstWeight;
        ratio[k] = parameters.firstRatio;
    }
    for (int j = -radius; j < radius + RUN; ++j) {
        vec4 texel = texelFetch(source, axisPixel(clampIndex(first + j, length), across, vertical), 0);
        for (int k = 0; k < RUN; ++k) {
            // Output k takes the taps j = k - radius ... k + radius (a uniform condition).
            if (j >= k - radius && j <= k + radius) {
                sums[k] += weight[k] * texel;
                weight[k] *= ratio[k];
                ratio[k] *= parameters.q;
            }
        }
    }
    for (int k = 0; k < RUN; ++k) {
        if (first + k < length) {
            imageStore(destination, axisPixel(first + k, across, vertical), sums[k] * parameters.normaliser);
        }
    }
}
