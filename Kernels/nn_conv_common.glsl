// What CONV_2D kernels share (#include after nn_common.glsl): bindings, parameters and
// the fused epilogue (nn_conv_epilogue.glsl).

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer Residual { vec4 residualData[]; };
layout(binding = 4) readonly buffer InputScale { vec4 scaleData[]; }; // SCALED kernels only

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

#include "nn_conv_epilogue.glsl"

// RESIZED kernels (a RESIZE_BILINEAR folded into the 1x1, stride-1 convolution reading
// it): input group `ic` resized to the output pixel whose bilinear taps are `taps` and
// `weights`.
vec4 resizedInput(ivec4 taps, vec4 weights, int ic) {
    int base = p.inOffset + ic;
    return inData[base + taps.x * p.inC4] * weights.x + inData[base + taps.y * p.inC4] * weights.y
         + inData[base + taps.z * p.inC4] * weights.z + inData[base + taps.w * p.inC4] * weights.w;
}
