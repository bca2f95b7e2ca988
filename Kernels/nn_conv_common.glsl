// What CONV_2D kernels share (#include after nn_common.glsl): bindings, parameters and
// the fused epilogue (nn_conv_epilogue.glsl).

#include "nn_tensor_reads.glsl"
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
#ifdef TEXEL_READS
layout(binding = 4, rgba32f) readonly uniform imageBuffer scaleTexels; // SCALED kernels only
#define SCALE_AT(i) imageLoad(scaleTexels, (i))
#else
layout(binding = 4) readonly buffer InputScale { vec4 scaleData[]; }; // SCALED kernels only
#define SCALE_AT(i) scaleData[i]
#endif

layout(push_constant) uniform Parameters {
    int inOffset, outOffset, weightOffset, biasOffset;
    int inH, inW, inC4;
    int outH, outW, outC4, outC;
    int strideY, strideX, padTop, padLeft;
    int residualOffset, residualC4; // residualC4 < 0: no residual
    int act1, alpha1Offset, act2, alpha2Offset;
    int residualPool, residualH, residualW; // residualPool > 0: the residual is the max over a
                                            // residualPool-square window of this [H, W] tensor;
    float residualScaleY, residualScaleX,   // residualPool < 0: it is this tensor resized
          residualCentre;                   // bilinearly with these scales
    int inScaleOffset;                      // SCALED: input group g is multiplied by scaleData[this + g]
    float resizeScaleY, resizeScaleX,       // RESIZED: the input is read through a bilinear
          resizeCentre;                     // resize to the output's size (bilinearTaps)
} p;

#include "nn_epilogue_kind.glsl"
#include "nn_conv_epilogue.glsl"

// RESIZED kernels (a RESIZE_BILINEAR folded into the 1x1, stride-1 convolution reading
// it): input group `ic` resized to the output pixel whose bilinear taps are `taps` and
// `weights`.
vec4 resizedInput(ivec4 taps, vec4 weights, int ic) {
    int base = p.inOffset + ic;
    return IN_AT(base + taps.x * p.inC4) * weights.x + IN_AT(base + taps.y * p.inC4) * weights.y
         + IN_AT(base + taps.z * p.inC4) * weights.z + IN_AT(base + taps.w * p.inC4) * weights.w;
}
