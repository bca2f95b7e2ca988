#version 450
// nn_elementwise.glsl reading storage buffers (GPUs).
#include "nn_elementwise.glsl"
