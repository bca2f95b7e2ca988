// nn_depthwise_conv2d.glsl reading its tensors through texel buffers, for lavapipe (nn_tensor_reads.glsl).
#define TEXEL_READS
#include "nn_depthwise_conv2d.glsl"
