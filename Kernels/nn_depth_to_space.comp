#version 450
// DEPTH_TO_SPACE (TensorFlow's DCR order) on channel-packed NHWC4 tensors:
// out[y, x, c] = in[y / b, x / b, ((y % b) * b + x % b) * C + c].
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { float inScalars[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int inW, inC4;
    int outH, outW, outC, outC4;
    int block;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.outH * p.outW * p.outC4) {
        return;
    }
    int c4 = index % p.outC4;
    int pixel = index / p.outC4;
    int oy = pixel / p.outW;
    int ox = pixel % p.outW;
    int base = (p.inOffset + ((oy / p.block) * p.inW + ox / p.block) * p.inC4) * 4
             + ((oy % p.block) * p.block + ox % p.block) * p.outC;
    vec4 v = vec4(0.0);
    for (int k = 0; k < 4; ++k) {
        int c = c4 * 4 + k;
        if (c < p.outC) {
            v[k] = inScalars[base + c];
        }
    }
    outData[p.outOffset + index] = v;
}
