#version 450
// CONV_2D on channel-packed NHWC4 tensors, with its epilogue fused:
//   out = act2(act1(conv(in) + bias) + residual)
// act1 is the conv's own (or a following) activation, the residual a fused ADD whose
// other operand may have fewer channels (a fused channel PAD reads as zeros), act2
// the activation after that ADD. Padding is TensorFlow's (the host computes the
// before-padding, folding in any spatial PAD that fed this conv).
//
// An invocation computes OCB consecutive channel groups of one output pixel, so each
// input vec4 it loads feeds 16*OCB multiply-adds. Neighbouring invocations take
// neighbouring pixels with the same channel groups, so the weight loads are uniform.
// Weights: for each output group, [ky][kx][input group][4 input lanes] vec4s, each
// vec4 holding the weights of 4 output channels.
#include "nn_common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int KH = 1;
layout(constant_id = 1) const int KW = 1;
layout(constant_id = 2) const int OCB = 1;

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer Residual { vec4 residualData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset, weightOffset, biasOffset;
    int inH, inW, inC4;
    int outH, outW, outC4, outC;
    int strideY, strideX, padTop, padLeft;
    int residualOffset, residualC4; // residualC4 < 0: no residual
    int act1, alpha1Offset, act2, alpha2Offset;
    int residualPool, residualH, residualW; // residualPool > 0: the residual is the max over a
                                            // residualPool-square window of this [H, W] tensor
} p;

// The residual's channel group `c4` for output `pixel`: read as is, or the max over the
// fused skip-path pool's window (cells past the pooled tensor's edge are left out, as a
// SAME max-pool pads them).
vec4 residualAt(int pixel, int c4) {
    if (p.residualPool == 0) {
        return residualData[p.residualOffset + pixel * p.residualC4 + c4];
    }
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;
    vec4 best = vec4(-3.402823e38);
    for (int dy = 0; dy < p.residualPool; ++dy) {
        int iy = oy * p.residualPool + dy;
        for (int dx = 0; dx < p.residualPool; ++dx) {
            int ix = ox * p.residualPool + dx;
            if (iy < p.residualH && ix < p.residualW) {
                best = max(best, residualData[p.residualOffset + (iy * p.residualW + ix) * p.residualC4 + c4]);
            }
        }
    }
    return best;
}

void main() {
    int pixels = p.outH * p.outW;
    int blocks = (p.outC4 + OCB - 1) / OCB;
    int index = linearInvocation();
    if (index >= pixels * blocks) {
        return;
    }
    int pixel = index % pixels;
    int firstGroup = (index / pixels) * OCB;
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;

    vec4 acc[OCB];
    for (int g = 0; g < OCB; ++g) {
        acc[g] = vec4(0.0);
    }
    int groupStride = KH * KW * p.inC4 * 4;
    int weightBase = p.weightOffset + firstGroup * groupStride;
    for (int ky = 0; ky < KH; ++ky) {
        int iy = oy * p.strideY - p.padTop + ky;
        if (iy < 0 || iy >= p.inH) {
            continue;
        }
        for (int kx = 0; kx < KW; ++kx) {
            int ix = ox * p.strideX - p.padLeft + kx;
            if (ix < 0 || ix >= p.inW) {
                continue;
            }
            int inBase = p.inOffset + (iy * p.inW + ix) * p.inC4;
            int tap = weightBase + (ky * KW + kx) * p.inC4 * 4;
            for (int ic = 0; ic < p.inC4; ++ic) {
                vec4 v = inData[inBase + ic];
                int w = tap + ic * 4;
                for (int g = 0; g < OCB; ++g) {
                    int wg = w + g * groupStride;
                    acc[g] += v.x * constants[wg] + v.y * constants[wg + 1]
                            + v.z * constants[wg + 2] + v.w * constants[wg + 3];
                }
            }
        }
    }

    for (int g = 0; g < OCB; ++g) {
        int c4 = firstGroup + g;
        if (c4 >= p.outC4) {
            break;
        }
        vec4 v = acc[g] + constants[p.biasOffset + c4];
        if (p.act1 != ACT_NONE) {
            v = activate(v, p.act1, p.act1 == ACT_PRELU ? constants[p.alpha1Offset + c4] : vec4(0.0));
        }
        if (p.residualC4 >= 0) {
            if (c4 < p.residualC4) {
                v += residualAt(pixel, c4);
            }
            v = activate(v, p.act2, p.act2 == ACT_PRELU ? constants[p.alpha2Offset + c4] : vec4(0.0));
        }
        outData[p.outOffset + pixel * p.outC4 + c4] = maskChannels(v, c4, p.outC);
    }
}
