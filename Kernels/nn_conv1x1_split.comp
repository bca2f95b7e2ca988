#version 450
// CONV_2D 1x1 for small outputs with many input channels (the deep end of the face
// models: 12x12 or 6x6 pixels, 128+ channels), with the same fused epilogue as
// nn_conv2d.comp. There, one invocation loops over every input group of its output in
// turn, so a layer with few outputs takes as long as one invocation's long loop. Here
// SLICES invocations share each output group: slice s sums input groups s, s+SLICES, ...,
// the partial sums meet in shared memory, and slice 0 adds them and runs the epilogue.
#include "nn_common.glsl"
#include "nn_conv_common.glsl"

const int SLICES = 8;
const int OUTPUTS = 8; // output groups per workgroup
layout(local_size_x = 64) in; // OUTPUTS x SLICES

shared vec4 partial[OUTPUTS * SLICES];

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
    vec4 total = vec4(0.0);
    for (int s = 0; s < SLICES; ++s) {
        total += partial[local * SLICES + s];
    }
    storeConvOutput(total, pixel, c4);
}
