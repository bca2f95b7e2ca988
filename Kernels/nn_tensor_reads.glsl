// Bindings 0 (input), 2 (constants) and 3 (residual) of a convolution kernel, read through
// IN_AT, CONST_AT and RESIDUAL_AT (nn_common.glsl). A GPU reads storage buffers. lavapipe
// (Mesa 22.3) loads from a storage buffer one lane and one float at a time, each behind a
// branch, so its kernels (the *_texels ones, TEXEL_READS) read texel buffers instead, where
// a vec4 load is one gather. Bound as storage texel buffers (imageLoad): lavapipe's texelFetch
// goes through its sampler's fetch path, which costs more per load (docs/PERFORMANCE.md).
#ifdef TEXEL_READS
layout(binding = 0, rgba32f) readonly uniform imageBuffer inTexels;
layout(binding = 2, rgba32f) readonly uniform imageBuffer constantTexels;
layout(binding = 3, rgba32f) readonly uniform imageBuffer residualTexels;
#else
layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer Residual { vec4 residualData[]; };
#endif
