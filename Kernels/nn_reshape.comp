#version 450
// RESHAPE between channel-packed NHWC4 tensors whose packing differs (when it does
// not, the planner aliases the memory instead): each output element takes the input
// element with the same row-major NHWC index.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { float inScalars[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int inW, inC, inC4;
    int outH, outW, outC, outC4;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.outH * p.outW * p.outC4) {
        return;
    }
    int c4 = index % p.outC4;
    int pixel = index / p.outC4;
    vec4 v = vec4(0.0);
    for (int k = 0; k < 4; ++k) {
        int c = c4 * 4 + k;
        if (c < p.outC) {
            int element = pixel * p.outC + c;
            int inPixel = element / p.inC;
            int ic = element - inPixel * p.inC;
            v[k] = inScalars[(p.inOffset + inPixel * p.inC4) * 4 + ic];
        }
    }
    outData[p.outOffset + index] = v;
}
