#version 450
// nn_squeeze_excite.glsl reading texel buffers, for lavapipe.
#define TEXEL_READS
#include "nn_squeeze_excite.glsl"
