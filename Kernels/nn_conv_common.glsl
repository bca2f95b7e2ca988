// What CONV_2D kernels share (#include after nn_common.glsl): bindings, parameters and
// the fused epilogue out = act2(act1(acc + bias) + residual), where the residual may have
// fewer channels (a fused channel PAD reads as zeros) or be the max-pool of a larger tensor
// (a fused skip-path pool).

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

// Writes output channel group `c4` of `pixel` from its accumulated sum.
void storeConvOutput(vec4 acc, int pixel, int c4) {
    vec4 v = acc + constants[p.biasOffset + c4];
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
