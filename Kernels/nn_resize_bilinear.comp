#version 450
// RESIZE_BILINEAR on channel-packed NHWC4 tensors, as TFLite computes it:
// src = (dst + o) * scale - o (o = 0.5 with half-pixel centres, else 0), the lower
// tap clamped at 0 and the upper at size-1, weights from the unclamped src.
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
    float sy = (float(oy) + p.centreOffset) * p.scaleY - p.centreOffset;
    float sx = (float(ox) + p.centreOffset) * p.scaleX - p.centreOffset;
    int y0 = max(int(floor(sy)), 0);
    int y1 = min(int(ceil(sy)), p.inH - 1);
    int x0 = max(int(floor(sx)), 0);
    int x1 = min(int(ceil(sx)), p.inW - 1);
    float fy = sy - float(y0);
    float fx = sx - float(x0);
    vec4 a = inData[p.inOffset + (y0 * p.inW + x0) * p.c4Count + c4];
    vec4 b = inData[p.inOffset + (y0 * p.inW + x1) * p.c4Count + c4];
    vec4 c = inData[p.inOffset + (y1 * p.inW + x0) * p.c4Count + c4];
    vec4 d = inData[p.inOffset + (y1 * p.inW + x1) * p.c4Count + c4];
    vec4 v = a * (1.0 - fy) * (1.0 - fx) + b * (1.0 - fy) * fx + c * fy * (1.0 - fx) + d * fy * fx;
    outData[p.outOffset + index] = v;
}
