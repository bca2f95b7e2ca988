#version 450
// Copies a channel-packed NHWC4 tensor into a dense row-major float tensor (TFLite's
// own layout), for later kernels and CPU readback. With block > 1 it copies the
// DEPTH_TO_SPACE of the tensor instead (as nn_depth_to_space.comp computes it).
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { float inScalars[]; };
layout(binding = 1) writeonly buffer Output { float outScalars[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int pixels, channels, c4Count; // pixels and channels of the output, groups of the input
    int block, outW, inW;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.pixels * p.channels) {
        return;
    }
    int pixel = index / p.channels;
    int c = index - pixel * p.channels;
    if (p.block > 1) {
        int oy = pixel / p.outW;
        int ox = pixel - oy * p.outW;
        c += ((oy % p.block) * p.block + ox % p.block) * p.channels;
        pixel = (oy / p.block) * p.inW + ox / p.block;
    }
    outScalars[p.outOffset + index] = inScalars[(p.inOffset + pixel * p.c4Count) * 4 + c];
}
