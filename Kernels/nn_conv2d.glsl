// CONV_2D on channel-packed NHWC4 tensors, with its epilogue fused:
//   out = act2(act1(conv(in) + bias) + residual)
// act1 is the conv's own (or a following) activation, the residual a fused ADD whose
// other operand may have fewer channels (a fused channel PAD reads as zeros), act2
// the activation after that ADD. Padding is TensorFlow's (the host computes the
// before-padding, folding in any spatial PAD that fed this conv). A 1x1 convolution may
// read its input through a folded RESIZE_BILINEAR (RESIZED).
//
// An invocation computes OCB consecutive channel groups of one output pixel, so each
// input vec4 it loads feeds 16*OCB multiply-adds. Neighbouring invocations take
// neighbouring pixels with the same channel groups, so the weight loads are uniform.
// Weights: for each output group, [ky][kx][input group][4 input lanes] vec4s, each
// vec4 holding the weights of 4 output channels.
#include "nn_common.glsl"
#include "nn_conv_common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int KH = 1;
layout(constant_id = 1) const int KW = 1;
layout(constant_id = 2) const int OCB = 1;
layout(constant_id = 3) const int SCALED = 0; // 1: a fused MUL scales the input channels
layout(constant_id = 4) const int RESIZED = 0; // 1 (1x1 only): a folded RESIZE_BILINEAR resizes the input

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
    ivec4 taps = ivec4(0);
    vec4 tapWeights = vec4(0.0);
    if (RESIZED != 0) {
        bilinearTaps(oy, ox, p.inH, p.inW, p.resizeScaleY, p.resizeScaleX, p.resizeCentre, taps, tapWeights);
    }
    int groupStride = KH * KW * p.inC4 * 4;
    int weightBase = p.weightOffset + firstGroup * groupStride;
    // Taps outside the image are loaded clamped and zeroed rather than skipped, so no load
    // waits on a branch (small layers are bound by load latency).
    for (int ky = 0; ky < KH; ++ky) {
        int iy = oy * p.strideY - p.padTop + ky;
        bool rowInside = iy >= 0 && iy < p.inH;
        for (int kx = 0; kx < KW; ++kx) {
            int ix = ox * p.strideX - p.padLeft + kx;
            bool inside = rowInside && ix >= 0 && ix < p.inW;
            int inBase = p.inOffset + (clamp(iy, 0, p.inH - 1) * p.inW + clamp(ix, 0, p.inW - 1)) * p.inC4;
            int tap = weightBase + (ky * KW + kx) * p.inC4 * 4;
            for (int ic = 0; ic < p.inC4; ++ic) {
                vec4 v;
                if (RESIZED != 0) {
                    v = resizedInput(taps, tapWeights, ic);
                } else {
                    v = IN_AT(inBase + ic);
                    v = inside ? v : vec4(0.0);
                }
                if (SCALED != 0) {
                    v *= SCALE_AT(p.inScaleOffset + ic);
                }
                int w = tap + ic * 4;
                for (int g = 0; g < OCB; ++g) {
                    int wg = w + g * groupStride;
                    acc[g] += v.x * CONST_AT(wg) + v.y * CONST_AT(wg + 1)
                            + v.z * CONST_AT(wg + 2) + v.w * CONST_AT(wg + 3);
                }
            }
        }
    }

    for (int g = 0; g < OCB; ++g) {
        int c4 = firstGroup + g;
        if (c4 >= p.outC4) {
            break;
        }
        storeConvOutput(acc[g], pixel, c4);
    }
}
