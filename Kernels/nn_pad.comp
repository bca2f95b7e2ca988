#version 450
// PAD with zeros on the H, W and C axes of channel-packed NHWC4 tensors (the input
// is read as scalars, so channel padding need not be a multiple of 4).
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { float inScalars[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int inH, inW, inC, inC4;
    int outH, outW, outC, outC4;
    int padTop, padLeft, padFront;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.outH * p.outW * p.outC4) {
        return;
    }
    int c4 = index % p.outC4;
    int pixel = index / p.outC4;
    int iy = pixel / p.outW - p.padTop;
    int ix = pixel % p.outW - p.padLeft;
    vec4 v = vec4(0.0);
    if (iy >= 0 && iy < p.inH && ix >= 0 && ix < p.inW) {
        int base = (p.inOffset + (iy * p.inW + ix) * p.inC4) * 4;
        for (int k = 0; k < 4; ++k) {
            int c = c4 * 4 + k - p.padFront;
            if (c >= 0 && c < p.inC && c4 * 4 + k < p.outC) {
                v[k] = inScalars[base + c];
            }
        }
    }
    outData[p.outOffset + index] = v;
}
