#version 450
// CONV_2D 1x1 for small outputs with many input channels (the deep end of the face
// models: 12x12 or 6x6 pixels, 128+ channels), with the same fused epilogue as
// nn_conv2d.comp. There, one invocation loops over every input group of its output in
// turn, so a layer with few outputs takes as long as one invocation's long loop. Here
// SLICES invocations share each output group: slice s sums input groups s, s+SLICES, ...,
// the partial sums meet in shared memory, and slice 0 adds them and runs the epilogue.
#include "nn_common.glsl"

const int SLICES = 8;
const int OUTPUTS = 8; // output groups per workgroup
layout(local_size_x = 64) in; // OUTPUTS x SLICES

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

shared vec4 partial[OUTPUTS * SLICES];

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
        int iy = oy * p.strideY - p.padTop;
        int ix = ox * p.strideX - p.padLeft;
        if (iy >= 0 && iy < p.inH && ix >= 0 && ix < p.inW) {
            int inBase = p.inOffset + (iy * p.inW + ix) * p.inC4;
            int weightBase = p.weightOffset + c4 * p.inC4 * 4;
            for (int ic = slice; ic < p.inC4; ic += SLICES) {
                vec4 v = inData[inBase + ic];
                int w = weightBase + ic * 4;
                sum += v.x * constants[w] + v.y * constants[w + 1] + v.z * constants[w + 2] + v.w * constants[w + 3];
            }
        }
    }
    partial[gl_LocalInvocationID.x] = sum;
    barrier();
    if (!hasOutput || slice != 0) {
        return;
    }
    vec4 v = constants[p.biasOffset + c4];
    for (int s = 0; s < SLICES; ++s) {
        v += partial[local * SLICES + s];
    }
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
