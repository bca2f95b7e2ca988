// The depthwise sum every depthwise kernel shares (#include after the kernel declares
// `inData` and `constants`): channel group `g` of a kh x kw window whose top-left tap is
// (iy0, ix0) in an [inH, inW, groups] NHWC4 tensor at `inBase`, weights [tap][group] from
// `weightBase`. Every tap is loaded (clamped, then zeroed outside the image) so the loads
// need not wait for one another: layers this small are bound by their latency.
vec4 depthwiseSum(int inBase, int inH, int inW, int groups, int g, int iy0, int ix0, int kh, int kw, int weightBase) {
    vec4 acc = vec4(0.0);
    for (int ky = 0; ky < kh; ++ky) {
        int iy = iy0 + ky;
        bool rowInside = iy >= 0 && iy < inH;
        for (int kx = 0; kx < kw; ++kx) {
            int ix = ix0 + kx;
            bool inside = rowInside && ix >= 0 && ix < inW;
            vec4 v = IN_AT(inBase + (clamp(iy, 0, inH - 1) * inW + clamp(ix, 0, inW - 1)) * groups + g);
            acc += (inside ? v : vec4(0.0)) * CONST_AT(weightBase + (ky * kw + kx) * groups + g);
        }
    }
    return acc;
}
