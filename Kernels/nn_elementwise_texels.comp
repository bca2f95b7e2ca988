#version 450
// nn_elementwise.glsl reading texel buffers, its op, broadcast, addend and activation fixed
// at compile time, for lavapipe.
#define TEXEL_READS
#include "nn_elementwise.glsl"
