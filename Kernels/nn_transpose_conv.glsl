// MediaPipe's Convolution2DTransposeBias (a transposed convolution plus bias) on
// channel-packed NHWC4 tensors, written as a gather: output (oy, ox) takes input
// (iy, ix) through tap (ky, kx) when oy = iy*stride - padTop + ky. Fused activation
// as in nn_conv2d (act1 only). Weights use nn_conv2d's layout. The input and constants
// are read through IN_AT and CONST_AT: storage buffers (nn_transpose_conv.comp), or texel
// buffers with the kernel's size fixed at compile time (nn_transpose_conv_texels.comp, for
// lavapipe, which loads a storage buffer lane by lane and runs every tap's branch).
#include "nn_common.glsl"

layout(local_size_x = 64) in;

#ifdef TEXEL_READS
layout(binding = 0, rgba32f) readonly uniform imageBuffer inTexels;
layout(binding = 2, rgba32f) readonly uniform imageBuffer constantTexels;
layout(constant_id = 0) const int KH = 1;
layout(constant_id = 1) const int KW = 1;
#define KERNEL_H KH
#define KERNEL_W KW
#else
layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
#define KERNEL_H p.kernelH
#define KERNEL_W p.kernelW
#endif
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    int inOffset, outOffset, weightOffset, biasOffset;
    int inH, inW, inC4;
    int outH, outW, outC4, outC;
    int strideY, strideX, padTop, padLeft;
    int kernelH, kernelW;
    int act1, alpha1Offset;
} p;

void main() {
    int pixels = p.outH * p.outW;
    int index = linearInvocation();
    if (index >= pixels * p.outC4) {
        return;
    }
    int pixel = index % pixels;
    int c4 = index / pixels;
    int oy = pixel / p.outW;
    int ox = pixel - oy * p.outW;

    vec4 acc = vec4(0.0);
    int groupStride = KERNEL_H * KERNEL_W * p.inC4 * 4;
    for (int ky = 0; ky < KERNEL_H; ++ky) {
        int ty = oy + p.padTop - ky;
        if (ty < 0 || ty % p.strideY != 0 || ty / p.strideY >= p.inH) {
            continue;
        }
        int iy = ty / p.strideY;
        for (int kx = 0; kx < KERNEL_W; ++kx) {
            int tx = ox + p.padLeft - kx;
            if (tx < 0 || tx % p.strideX != 0 || tx / p.strideX >= p.inW) {
                continue;
            }
            int ix = tx / p.strideX;
            int inBase = p.inOffset + (iy * p.inW + ix) * p.inC4;
            int w = p.weightOffset + c4 * groupStride + (ky * KERNEL_W + kx) * p.inC4 * 4;
            for (int ic = 0; ic < p.inC4; ++ic) {
                vec4 v = IN_AT(inBase + ic);
                acc += v.x * CONST_AT(w) + v.y * CONST_AT(w + 1) + v.z * CONST_AT(w + 2) + v.w * CONST_AT(w + 3);
                w += 4;
            }
        }
    }
    vec4 v = acc + CONST_AT(p.biasOffset + c4);
    v = activate(v, p.act1, p.act1 == ACT_PRELU ? CONST_AT(p.alpha1Offset + c4) : vec4(0.0));
    outData[p.outOffset + pixel * p.outC4 + c4] = maskChannels(v, c4, p.outC);
}
