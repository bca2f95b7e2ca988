#version 450
#extension GL_GOOGLE_include_directive : enable
// The normalised convolution's input, once per pixel: (rgb * m, m), m the skin mask, in
// 32-bit floats so the blur that reads it sums exactly what it would have weighed itself
// per tap (one mask sample per pixel instead of one per tap: lavapipe's bilinear mask
// reads were most of frequency separation's base layer).
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) uniform sampler2D mask;     // linear sampler
layout(binding = 2, rgba32f) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    vec2 inverseFrame;
} parameters;

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        return;
    }
    vec4 value = texelFetch(source, pixel, 0);
    float m = texture(mask, (vec2(pixel) + 0.5) * parameters.inverseFrame).r;
    imageStore(destination, pixel, vec4(value.rgb * m, m));
}
