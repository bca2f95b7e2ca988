#version 450
// nn_transpose_conv.glsl reading storage buffers (GPUs).
#include "nn_transpose_conv.glsl"
