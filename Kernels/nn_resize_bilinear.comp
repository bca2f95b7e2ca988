#version 450
// RESIZE_BILINEAR on channel-packed NHWC4 tensors, as TFLite computes it (bilinearTaps
// in nn_common.glsl).
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int inH, inW, c4Count;
    int outH, outW;
    float scaleY, scaleX, centreOffset;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.outH * p.outW * p.c4Count) {
        return;
    }
    int c4 = index % p.c4Count;
    int pixel = index / p.c4Count;
    int oy = pixel / p.outW;
    int ox = pixel % p.outW;
    ivec4 taps;
    vec4 weights;
    bilinearTaps(oy, ox, p.inH, p.inW, p.scaleY, p.scaleX, p.centreOffset, taps, weights);
    int base = p.inOffset + c4;
    vec4 v = inData[base + taps.x * p.c4Count] * weights.x + inData[base + taps.y * p.c4Count] * weights.y
           + inData[base + taps.z * p.c4Count] * weights.z + inData[base + taps.w * p.c4Count] * weights.w;
    outData[p.outOffset + index] = v;
}
