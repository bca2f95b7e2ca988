#version 450
#extension GL_GOOGLE_include_directive : enable
// One axis of the small separable Gaussian of frequency separation's base layer, as a
// normalised convolution over the skin: the horizontal pass blurs (rgb * m, m), m the
// skin mask (`beauty_skin_weigh.comp` writes it), and the vertical pass blurs those sums,
// so base = rgb / m averages skin only.
// Background next to the face and the features inside it then stay out of the base layer,
// and out of the high layer (I - base) too: an edge's step never lands on the skin beside
// it as a line. Reads outside the region come from the frame (clamped at its edge);
// writes stay inside the region.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

// Output pixels an invocation computes, consecutive along the blur's axis. With more than
// one (CPU devices) it slides a window of RUN texels along the taps, so each texel is
// fetched and each weight computed once for the run rather than once per output (lavapipe
// pays per fetch; a GPU per serial step). Every output still adds its taps in the same
// order, so the result is the same to the bit.
layout(constant_id = 0) const int RUN = 1;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    int vertical;
    int radius;
    float factor;     // -1 / (2 sigma^2)
    float normaliser; // 1 / sum of the weights
} parameters;

void main() {
    ivec2 step = parameters.vertical != 0 ? ivec2(0, 1) : ivec2(1, 0);
    ivec2 invocation = ivec2(gl_GlobalInvocationID.xy);
    ivec2 first = parameters.origin + (parameters.vertical != 0 ? ivec2(invocation.x, invocation.y * RUN)
                                                                : ivec2(invocation.x * RUN, invocation.y));
    if (!beautyInRegion(first, parameters.origin, parameters.size)) {
        return;
    }
    ivec2 last = textureSize(source, 0) - 1;
    // window[i]: the texel tap d reads for output i (first + i * step + d * step).
    vec4 window[RUN];
    for (int i = 0; i < RUN; ++i) {
        window[i] = texelFetch(source, clamp(first + (i - parameters.radius) * step, ivec2(0), last), 0);
    }
    vec4 sum[RUN];
    for (int i = 0; i < RUN; ++i) {
        sum[i] = vec4(0.0);
    }
    for (int d = -parameters.radius; d <= parameters.radius; ++d) {
        float w = exp(float(d * d) * parameters.factor);
        for (int i = 0; i < RUN; ++i) {
            sum[i] += w * window[i];
        }
        for (int i = 0; i + 1 < RUN; ++i) {
            window[i] = window[i + 1];
        }
        window[RUN - 1] = texelFetch(source, clamp(first + (RUN + d) * step, ivec2(0), last), 0);
    }
    for (int i = 0; i < RUN; ++i) {
        ivec2 pixel = first + i * step;
        if (beautyInRegion(pixel, parameters.origin, parameters.size)) {
            imageStore(destination, pixel, sum[i] * parameters.normaliser);
        }
    }
}
