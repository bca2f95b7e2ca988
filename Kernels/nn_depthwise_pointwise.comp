#version 450
// A DEPTHWISE_CONV_2D and the 1x1 CONV_2D reading it, in one launch (a BlazeBlock's or an
// inverted residual's two convolutions), with the 1x1's fused epilogue:
//   mid = dwAct(dwconv(in) + dwBias)            (kept in shared memory)
//   out = act2(act1(conv1x1(mid) + bias) + residual)
// Launching them apart costs a barrier and a launch between them, which on a fast GPU
// is most of what a small layer costs.
//
// A workgroup owns a tile of P consecutive output pixels and `outGroupsPerTile` output
// channel groups. Its invocations stage those groups' 1x1 weights and compute the
// tile's depthwise output for every middle channel group into shared memory
// (neighbouring invocations take neighbouring groups of a pixel, so their loads are
// contiguous; it is stored [group][pixel], rows P + 1 apart, so the 1x1's neighbouring
// invocations read neighbouring vec4s and the stores do not collide in banks); then each
// (pixel, output group) of the tile sums over the middle groups, shared among S
// invocations (each a slice of the groups) when the tile has few outputs. Workgroups
// with other output groups of the same tile redo the depthwise part, which is cheap
// next to the 1x1. Layers this small are bound by memory latency, not arithmetic, so
// the 1x1's inner loop reads shared memory only.
#include "nn_common.glsl"

const int THREADS = 256;
layout(local_size_x = 256) in;
layout(constant_id = 0) const int KH = 3;
layout(constant_id = 1) const int KW = 3;
layout(constant_id = 2) const int P = 64; // pixels per tile
layout(constant_id = 3) const int S = 1;  // invocations sharing one output's sum
// vec4s of shared memory for the tile's depthwise output and the staged 1x1 weights
// (28 KiB: with `partial`, Vulkan's guaranteed 32 KiB).
const int STORE = 1792;

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer Residual { vec4 residualData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset, dwWeightOffset, dwBiasOffset;
    int inH, inW, midC4;
    int outH, outW, outC4, outC;
    int strideY, strideX, padTop, padLeft;
    int dwAct, dwAlphaOffset;
    int weightOffset, biasOffset, outGroupsPerTile;
    int residualOffset, residualC4; // residualC4 < 0: no residual
    int act1, alpha1Offset, act2, alpha2Offset;
    int residualPool, residualH, residualW;
    float residualScaleY, residualScaleX, residualCentre;
} p;

#include "nn_epilogue_kind.glsl"
#include "nn_conv_epilogue.glsl"
#include "nn_depthwise_taps.glsl"

shared vec4 store[STORE]; // [0, (P + 1) * midC4): depthwise output; then the 1x1 weights
shared vec4 partial[THREADS];

// The depthwise output of middle group `g` at output pixel `pixel`.
vec4 depthwise(int pixel, int g) {
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;
    vec4 acc = depthwiseSum(p.inOffset, p.inH, p.inW, p.midC4, g, oy * p.strideY - p.padTop, ox * p.strideX - p.padLeft,
                            KH, KW, p.dwWeightOffset);
    vec4 v = acc + constants[p.dwBiasOffset + g];
    if (p.dwAct != ACT_NONE) {
        v = activate(v, p.dwAct, p.dwAct == ACT_PRELU ? constants[p.dwAlphaOffset + g] : vec4(0.0));
    }
    return v;
}

void main() {
    int t = int(gl_LocalInvocationID.x);
    int pixels = p.outH * p.outW;
    int tiles = (pixels + P - 1) / P;
    int workgroup = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int firstPixel = (workgroup % tiles) * P;
    int firstGroup = (workgroup / tiles) * p.outGroupsPerTile;
    const int ROW = P + 1;        // a middle group's row of the tile in `store`
    int weights = ROW * p.midC4;  // where the staged weights start

    // Stage the 1x1 weights of this workgroup's output groups (past the last group: zeros).
    int weightCount = p.outGroupsPerTile * p.midC4 * 4;
    int firstWeight = p.weightOffset + firstGroup * p.midC4 * 4;
    int lastWeight = p.weightOffset + p.outC4 * p.midC4 * 4;
    for (int i = t; i < weightCount; i += THREADS) {
        store[weights + i] = firstWeight + i < lastWeight ? constants[firstWeight + i] : vec4(0.0);
    }
    // The tile's depthwise output, every middle group.
    for (int e = t; e < P * p.midC4; e += THREADS) {
        int local = e / p.midC4;
        int g = e - local * p.midC4;
        int pixel = firstPixel + local;
        store[g * ROW + local] = pixel < pixels ? depthwise(pixel, g) : vec4(0.0);
    }
    barrier();

    // The 1x1 convolution: output k of the tile is (pixel k % P, group k / P).
    int slice = t % S;
    int lane = t / S;
    int outputs = P * p.outGroupsPerTile;
    int passes = (outputs + THREADS / S - 1) / (THREADS / S);
    for (int pass = 0; pass < passes; ++pass) {
        int k = pass * (THREADS / S) + lane;
        int local = k % P;
        int pixel = firstPixel + local;
        int group = k / P;
        bool valid = k < outputs && pixel < pixels && firstGroup + group < p.outC4;
        vec4 sum = vec4(0.0);
        if (valid) {
            int w = weights + group * p.midC4 * 4;
            for (int g = slice; g < p.midC4; g += S) {
                vec4 v = store[g * ROW + local];
                sum += v.x * store[w + g * 4] + v.y * store[w + g * 4 + 1]
                     + v.z * store[w + g * 4 + 2] + v.w * store[w + g * 4 + 3];
            }
        }
        if (S > 1) {
            partial[t] = sum;
            barrier();
            if (slice == 0) {
                for (int s = 1; s < S; ++s) {
                    sum += partial[t + s];
                }
            }
            barrier();
        }
        if (valid && slice == 0) {
            storeConvOutput(sum, pixel, firstGroup + group);
        }
    }
}
