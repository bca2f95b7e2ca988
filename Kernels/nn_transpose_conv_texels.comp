#version 450
// nn_transpose_conv.glsl reading its tensors through texel buffers, its kernel size fixed
// at compile time, for lavapipe.
#define TEXEL_READS
#include "nn_transpose_conv.glsl"
