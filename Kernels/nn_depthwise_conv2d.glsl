// DEPTHWISE_CONV_2D (depth multiplier 1) on channel-packed NHWC4 tensors, with the
// same fused epilogue as nn_conv2d: out = act2(act1(dwconv(in) + bias) + residual).
// Weights: [ky][kx][channel group] vec4s. Neighbouring invocations take neighbouring
// channel groups of one pixel, so their loads (input, weights, output) are contiguous.
// With DENSE_BLOCK > 0 the result is a graph output read by nothing else: it is written
// straight to the output's dense buffer, as the DEPTH_TO_SPACE of that block (1: none)
// feeding the output computes it (nn_unpack.comp), a launch and a level fewer.
#include "nn_common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const int KH = 3;
layout(constant_id = 1) const int KW = 3;
layout(constant_id = 2) const int DENSE_BLOCK = 0;

#include "nn_tensor_reads.glsl"
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 4) writeonly buffer DenseOutput { float outScalars[]; }; // DENSE_BLOCK > 0 only

layout(push_constant) uniform Parameters {
    int inOffset, outOffset, weightOffset, biasOffset;
    int inH, inW, inC4;
    int outH, outW, outC4, outC;
    int strideY, strideX, padTop, padLeft;
    int residualOffset, residualC4;
    int act1, alpha1Offset, act2, alpha2Offset;
    int denseC, denseW; // DENSE_BLOCK > 0: channels and width of the dense output
} p;

#include "nn_epilogue_kind.glsl"
#include "nn_depthwise_taps.glsl"
#include "nn_dense_output.glsl"

void main() {
    int pixels = p.outH * p.outW;
    int index = linearInvocation();
    if (index >= pixels * p.outC4) {
        return;
    }
    int pixel = index / p.outC4;
    int c4 = index - pixel * p.outC4;
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;

    vec4 acc = depthwiseSum(p.inOffset, p.inH, p.inW, p.inC4, c4, oy * p.strideY - p.padTop, ox * p.strideX - p.padLeft,
                            KH, KW, p.weightOffset);
    vec4 v = acc + CONST_AT(p.biasOffset + c4);
    if (EPILOGUE_ACT1 != ACT_NONE) {
        v = activate(v, EPILOGUE_ACT1, EPILOGUE_ACT1 == ACT_PRELU ? CONST_AT(p.alpha1Offset + c4) : vec4(0.0));
    }
    if (EPILOGUE_HAS_RESIDUAL) {
        if (c4 < p.residualC4) {
            v += RESIDUAL_AT(p.residualOffset + pixel * p.residualC4 + c4);
        }
        v = activate(v, EPILOGUE_ACT2, EPILOGUE_ACT2 == ACT_PRELU ? CONST_AT(p.alpha2Offset + c4) : vec4(0.0));
    }
    if (DENSE_BLOCK == 0) {
        outData[p.outOffset + pixel * p.outC4 + c4] = maskChannels(v, c4, p.outC);
        return;
    }
    storeDense(v, oy, ox, c4, p.outC, DENSE_BLOCK, p.denseC, p.denseW);
}
