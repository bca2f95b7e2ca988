#include "nn_depthwise_conv2d.glsl"
