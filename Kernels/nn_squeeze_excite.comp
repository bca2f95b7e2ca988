#version 450
// nn_squeeze_excite.glsl reading storage buffers (GPUs).
#include "nn_squeeze_excite.glsl"
