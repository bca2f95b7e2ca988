#version 450
// Copies a channel-packed NHWC4 tensor into a dense row-major float tensor (TFLite's
// own layout), for later kernels and CPU readback.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { float inScalars[]; };
layout(binding = 1) writeonly buffer Output { float outScalars[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int pixels, channels, c4Count;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.pixels * p.channels) {
        return;
    }
    int pixel = index / p.channels;
    int c = index - pixel * p.channels;
    outScalars[p.outOffset + index] = inScalars[(p.inOffset + pixel * p.c4Count) * 4 + c];
}
