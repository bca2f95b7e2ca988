#version 450
#extension GL_GOOGLE_include_directive : enable
// Normalised convolution, step 1: box-downsample (rgb * m, m) by `factor`, where m is the
// skin mask and rgb the source (less `base` when SUBTRACT is set: the low-pass of a change).
// Blurring this and dividing rgb by m gives a low-pass that only averages skin, so
// background and feature colours never bleed into the face (the halo of a plain blur).
// Blocks outside the region of interest are written as zero.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int SUBTRACT = 0;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) uniform sampler2D mask;     // linear sampler
layout(binding = 2) uniform sampler2D base;     // nearest sampler (SUBTRACT)
layout(binding = 3) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;      // region of interest, frame pixels
    ivec2 size;
    ivec2 lowSize;     // destination size
    int factor;        // frame pixels per low-resolution pixel
    vec2 inverseFrame;
} parameters;

void main() {
    ivec2 low = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(low, parameters.lowSize))) {
        return;
    }
    ivec2 first = low * parameters.factor;
    ivec2 end = min(first + parameters.factor, parameters.origin + parameters.size);
    first = max(first, parameters.origin);
    vec4 sum = vec4(0.0);
    for (int y = first.y; y < end.y; ++y) {
        for (int x = first.x; x < end.x; ++x) {
            float m = texture(mask, (vec2(x, y) + 0.5) * parameters.inverseFrame).r;
            vec3 value = texelFetch(source, ivec2(x, y), 0).rgb;
            if (SUBTRACT != 0) {
                value -= texelFetch(base, ivec2(x, y), 0).rgb;
            }
            sum += vec4(value * m, m);
        }
    }
    imageStore(destination, low, sum / float(parameters.factor * parameters.factor));
}
