// A convolution's fused epilogue, out = act2(act1(acc + bias) + residual), where the
// residual may have fewer channels (a fused channel PAD reads as zeros), be the max-pool
// of a larger tensor (a fused skip-path pool) or the bilinear resize of a smaller one (a
// fused RESIZE_BILINEAR: bilinearTaps in nn_common.glsl). The including kernel declares the
// Output, Constants and Residual buffers and a push block `p` with the fields used; its kind
// may be fixed by specialisation (nn_epilogue_kind.glsl).

// The residual's channel group `c4` for output `pixel`: read as is, or the max over the
// fused skip-path pool's window (cells past the pooled tensor's edge are left out, as a
// SAME max-pool pads them).
vec4 residualAt(int pixel, int c4) {
    if (RESIDUAL == RESIDUAL_AS_IS || RESIDUAL < 0 && p.residualPool == 0) {
        return RESIDUAL_AT(p.residualOffset + pixel * p.residualC4 + c4);
    }
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;
    if (RESIDUAL == RESIDUAL_RESIZED || RESIDUAL < 0 && p.residualPool < 0) {
        ivec4 taps;
        vec4 weights;
        bilinearTaps(oy, ox, p.residualH, p.residualW, p.residualScaleY, p.residualScaleX, p.residualCentre, taps, weights);
        int base = p.residualOffset + c4;
        return RESIDUAL_AT(base + taps.x * p.residualC4) * weights.x + RESIDUAL_AT(base + taps.y * p.residualC4) * weights.y
             + RESIDUAL_AT(base + taps.z * p.residualC4) * weights.z + RESIDUAL_AT(base + taps.w * p.residualC4) * weights.w;
    }
    vec4 best = vec4(-3.402823e38);
    for (int dy = 0; dy < p.residualPool; ++dy) {
        int iy = oy * p.residualPool + dy;
        for (int dx = 0; dx < p.residualPool; ++dx) {
            int ix = ox * p.residualPool + dx;
            if (iy < p.residualH && ix < p.residualW) {
                best = max(best, RESIDUAL_AT(p.residualOffset + (iy * p.residualW + ix) * p.residualC4 + c4));
            }
        }
    }
    return best;
}

// Writes output channel group `c4` of `pixel` from its accumulated sum.
void storeConvOutput(vec4 acc, int pixel, int c4) {
    vec4 v = acc + CONST_AT(p.biasOffset + c4);
    if (EPILOGUE_ACT1 != ACT_NONE) {
        v = activate(v, EPILOGUE_ACT1, EPILOGUE_ACT1 == ACT_PRELU ? CONST_AT(p.alpha1Offset + c4) : vec4(0.0));
    }
    if (EPILOGUE_HAS_RESIDUAL) {
        if (c4 < p.residualC4) {
            v += residualAt(pixel, c4);
        }
        v = activate(v, EPILOGUE_ACT2, EPILOGUE_ACT2 == ACT_PRELU ? CONST_AT(p.alpha2Offset + c4) : vec4(0.0));
    }
    outData[p.outOffset + pixel * p.outC4 + c4] = maskChannels(v, c4, p.outC);
}
