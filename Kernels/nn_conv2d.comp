#include "nn_conv2d.glsl"
