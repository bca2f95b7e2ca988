#version 450
// CONV_2D for small outputs with long sums (the deep end of the face models: 12x12 or 6x6
// pixels with 128+ channels, or the mesh's 3x3 heads over 32 channels), with the same
// fused epilogue (and folded resize) as nn_conv2d.comp. There, one invocation loops over every tap and input
// group of its output in turn, so a layer with few outputs takes as long as one
// invocation's long loop. Here SLICES invocations share each output group: slice s sums
// terms s, s+SLICES, ... (a term is one tap of one input group), the partial sums meet in
// shared memory, and slice 0 adds them and runs the epilogue.
#include "nn_common.glsl"
#include "nn_conv_common.glsl"

layout(constant_id = 0) const int KH = 1;
layout(constant_id = 1) const int KW = 1;
layout(constant_id = 2) const int SCALED = 0; // 1: a fused MUL scales the input channels
layout(constant_id = 3) const int SLICES = 8; // 8, 16 or 32: longer sums take more
layout(constant_id = 4) const int RESIZED = 0; // 1 (1x1 only): a folded RESIZE_BILINEAR resizes the input
const int OUTPUTS = 64 / SLICES;               // output groups per workgroup
layout(local_size_x = 64) in;                  // OUTPUTS x SLICES

shared vec4 partial[64];

void main() {
    int slice = int(gl_LocalInvocationID.x) % SLICES;
    int local = int(gl_LocalInvocationID.x) / SLICES;
    int workgroup = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int index = workgroup * OUTPUTS + local; // output (c4 group, pixel), pixel fastest
    int pixels = p.outH * p.outW;
    bool hasOutput = index < pixels * p.outC4;
    int pixel = index % pixels;
    int c4 = index / pixels;

    vec4 sum = vec4(0.0);
    if (hasOutput) {
        int oy = pixel / p.outW;
        int ox = pixel - oy * p.outW;
        int terms = KH * KW * p.inC4;
        int weightBase = p.weightOffset + c4 * terms * 4;
        ivec4 taps = ivec4(0);
        vec4 tapWeights = vec4(0.0);
        if (RESIZED != 0) {
            bilinearTaps(oy, ox, p.inH, p.inW, p.resizeScaleY, p.resizeScaleX, p.resizeCentre, taps, tapWeights);
        }
        for (int term = slice; term < terms; term += SLICES) {
            int tap = term / p.inC4;
            int ic = term - tap * p.inC4;
            int ky = tap / KW;
            int iy = oy * p.strideY - p.padTop + ky;
            int ix = ox * p.strideX - p.padLeft + (tap - ky * KW);
            bool inside = iy >= 0 && iy < p.inH && ix >= 0 && ix < p.inW;
            vec4 v;
            if (RESIZED != 0) {
                v = resizedInput(taps, tapWeights, ic);
            } else {
                // Loaded clamped and zeroed outside, so no load waits on a branch.
                v = inData[p.inOffset + (clamp(iy, 0, p.inH - 1) * p.inW + clamp(ix, 0, p.inW - 1)) * p.inC4 + ic];
                v = inside ? v : vec4(0.0);
            }
            if (SCALED != 0) {
                v *= scaleData[p.inScaleOffset + ic];
            }
            int w = weightBase + term * 4;
            sum += v.x * constants[w] + v.y * constants[w + 1] + v.z * constants[w + 2] + v.w * constants[w + 3];
        }
    }
    partial[gl_LocalInvocationID.x] = sum;
    barrier();
    if (!hasOutput || slice != 0) {
        return;
    }
    vec4 total = vec4(0.0);
    for (int s = 0; s < SLICES; ++s) {
        total += partial[local * SLICES + s];
    }
    storeConvOutput(total, pixel, c4);
}
