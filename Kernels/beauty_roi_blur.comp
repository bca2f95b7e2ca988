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
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        return;
    }
    ivec2 last = textureSize(source, 0) - 1;
    ivec2 step = parameters.vertical != 0 ? ivec2(0, 1) : ivec2(1, 0);
    vec4 sum = vec4(0.0);
    for (int d = -parameters.radius; d <= parameters.radius; ++d) {
        float w = exp(float(d * d) * parameters.factor);
        ivec2 q = clamp(pixel + d * step, ivec2(0), last);
        sum += w * texelFetch(source, q, 0);
    }
    imageStore(destination, pixel, sum * parameters.normaliser);
}
