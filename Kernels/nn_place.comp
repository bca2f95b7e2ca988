#version 450
// One input of a CONCATENATION: copies a channel-packed NHWC4 tensor into the output
// at (y0, x0, c0), as scalars so channel offsets need not be multiples of 4. The
// input's zero lanes land on the output's padding lanes only past the output's last
// channel, so the tail of the last group stays zero without touching other inputs' data.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { float outScalars[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int inH, inW, inC, inC4;
    int outW, outC, outC4;
    int y0, x0, c0;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.inH * p.inW * p.inC4) {
        return;
    }
    int c4 = index % p.inC4;
    int pixel = index / p.inC4;
    int oy = pixel / p.inW + p.y0;
    int ox = pixel % p.inW + p.x0;
    vec4 v = inData[p.inOffset + index];
    int base = (p.outOffset + (oy * p.outW + ox) * p.outC4) * 4 + p.c0;
    for (int k = 0; k < 4; ++k) {
        int c = c4 * 4 + k;
        int oc = p.c0 + c;
        if (c < p.inC || (oc >= p.outC && oc < p.outC4 * 4)) {
            outScalars[base + c] = c < p.inC ? v[k] : 0.0;
        }
    }
}
