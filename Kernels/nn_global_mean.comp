#version 450
// The mean over all pixels of a channel-packed NHWC4 tensor (MEAN over axes 1,2, or a
// global AVERAGE_POOL_2D): one workgroup per channel group, each invocation sums a
// strided share of the pixels, then a tree reduction in shared memory.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int pixels, c4Count, channels;
    int act;
} p;

shared vec4 partial[64];

void main() {
    int c4 = int(gl_WorkGroupID.x);
    int lane = int(gl_LocalInvocationID.x);
    vec4 sum = vec4(0.0);
    for (int pixel = lane; pixel < p.pixels; pixel += 64) {
        sum += inData[p.inOffset + pixel * p.c4Count + c4];
    }
    partial[lane] = sum;
    barrier();
    for (int width = 32; width > 0; width >>= 1) {
        if (lane < width) {
            partial[lane] += partial[lane + width];
        }
        barrier();
    }
    if (lane == 0) {
        vec4 v = activate(partial[0] / float(p.pixels), p.act, vec4(0.0));
        outData[p.outOffset + c4] = maskChannels(v, c4, p.channels);
    }
}
