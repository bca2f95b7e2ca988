// Shared helpers for the VelvetNN tensor kernels (#include "nn_common.glsl").
//
// Tensors live in storage buffers as channel-packed NHWC4: a [H, W, C] tensor is
// H*W*ceil(C/4) vec4s, pixel-major, channels 4c..4c+3 in one vec4. Lanes past C in
// the last group are always written as zero, so any kernel may read whole vec4s.
// Offsets and sizes are in vec4 units; a 1D launch index covers any grid size.

// Reads of the input tensor, the constants and the residual, each bound as the tensor's own
// range: storage buffers, or with TEXEL_READS (the *_texels kernels, nn_tensor_reads.glsl)
// texel buffers.
#ifdef TEXEL_READS
#define IN_AT(i) imageLoad(inTexels, (i))
#define CONST_AT(i) imageLoad(constantTexels, (i))
#define RESIDUAL_AT(i) imageLoad(residualTexels, (i))
#else
#define IN_AT(i) inData[i]
#define CONST_AT(i) constants[i]
#define RESIDUAL_AT(i) residualData[i]
#endif

const int ACT_NONE = 0;
const int ACT_RELU = 1;
const int ACT_RELU6 = 2;
const int ACT_RELU_N1_TO_1 = 3;
const int ACT_TANH = 4;
const int ACT_LOGISTIC = 5;
const int ACT_HARD_SWISH = 6;
const int ACT_PRELU = 7;

// The invocation's index in a 1D launch that may spill into gl_NumWorkGroups.y.
int linearInvocation() {
    return int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x);
}

// `alpha` is only used by PRELU (the per-channel slopes of this vec4).
vec4 activate(vec4 v, int kind, vec4 alpha) {
    switch (kind) {
    case ACT_RELU: return max(v, vec4(0.0));
    case ACT_RELU6: return clamp(v, vec4(0.0), vec4(6.0));
    case ACT_RELU_N1_TO_1: return clamp(v, vec4(-1.0), vec4(1.0));
    case ACT_TANH: return tanh(v);
    case ACT_LOGISTIC: return vec4(1.0) / (vec4(1.0) + exp(-v));
    case ACT_HARD_SWISH: return v * clamp(v + vec4(3.0), vec4(0.0), vec4(6.0)) * (1.0 / 6.0);
    case ACT_PRELU: return mix(v * alpha, v, greaterThanEqual(v, vec4(0.0)));
    default: return v;
    }
}

// Zeroes the lanes of channel group `c4` that lie past `channels`.
vec4 maskChannels(vec4 v, int c4, int channels) {
    int valid = channels - 4 * c4;
    if (valid >= 4) {
        return v;
    }
    return vec4(valid > 0 ? v.x : 0.0, valid > 1 ? v.y : 0.0, valid > 2 ? v.z : 0.0, 0.0);
}

// Where RESIZE_BILINEAR reads output pixel (oy, ox) from an [h, w] source, as TFLite
// computes it: src = (dst + centre) * scale - centre (centre 0.5 with half-pixel centres,
// else 0), the lower tap clamped at 0 and the upper at size-1, the weights from the
// unclamped src (so they always sum to 1). `pixels`: the source pixels (y0,x0), (y0,x1),
// (y1,x0), (y1,x1); `weights`: theirs.
void bilinearTaps(int oy, int ox, int h, int w, float scaleY, float scaleX, float centre, out ivec4 pixels, out vec4 weights) {
    float sy = (float(oy) + centre) * scaleY - centre;
    float sx = (float(ox) + centre) * scaleX - centre;
    int y0 = max(int(floor(sy)), 0);
    int y1 = min(int(ceil(sy)), h - 1);
    int x0 = max(int(floor(sx)), 0);
    int x1 = min(int(ceil(sx)), w - 1);
    float fy = sy - float(y0);
    float fx = sx - float(x0);
    pixels = ivec4(y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1);
    weights = vec4((1.0 - fy) * (1.0 - fx), (1.0 - fy) * fx, fy * (1.0 - fx), fy * fx);
}
