#version 450
// MAX_POOL_2D / AVERAGE_POOL_2D on channel-packed NHWC4 tensors with TensorFlow
// padding. The average divides by the taps inside the input (TFLite's rule), and a
// max over a window that lies wholly in the padding is 0.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset;
    int inH, inW, c4Count, channels;
    int outH, outW;
    int strideY, strideX, padTop, padLeft;
    int filterH, filterW;
    int isAverage;
    int act;
} p;

void main() {
    int pixels = p.outH * p.outW;
    int index = linearInvocation();
    if (index >= pixels * p.c4Count) {
        return;
    }
    int c4 = index % p.c4Count;
    int pixel = index / p.c4Count;
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;
    int y0 = max(oy * p.strideY - p.padTop, 0);
    int y1 = min(oy * p.strideY - p.padTop + p.filterH, p.inH);
    int x0 = max(ox * p.strideX - p.padLeft, 0);
    int x1 = min(ox * p.strideX - p.padLeft + p.filterW, p.inW);
    vec4 sum = vec4(0.0);
    vec4 best = vec4(-3.402823466e38);
    for (int y = y0; y < y1; ++y) {
        for (int x = x0; x < x1; ++x) {
            vec4 v = inData[p.inOffset + (y * p.inW + x) * p.c4Count + c4];
            sum += v;
            best = max(best, v);
        }
    }
    int taps = max(y1 - y0, 0) * max(x1 - x0, 0);
    vec4 v = taps == 0 ? vec4(0.0) : (p.isAverage != 0 ? sum / float(taps) : best);
    v = activate(v, p.act, vec4(0.0));
    outData[p.outOffset + index] = maskChannels(v, c4, p.channels);
}
