#version 450
#extension GL_GOOGLE_include_directive : enable
// Composite: out = mix(spotFixed, processed, skin x zone x strength) inside the region of
// interest. A pixel with no blend weight and no spot fill is copied from the original
// texel untouched, so everything the mask does not reach is bit-exact (metric M3).
// With WRITE_WEIGHTS the final weight max(blend, spot fill) is also written (tests).
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int WRITE_WEIGHTS = 0;

layout(binding = 0) uniform sampler2D original;  // nearest
layout(binding = 1) uniform sampler2D spotFixed; // nearest: rgb fixed, a = spot weight
layout(binding = 2) uniform sampler2D processed; // nearest: smoothed
layout(binding = 3) uniform sampler2D mask;      // linear
layout(binding = 4) writeonly uniform image2D destination;
layout(binding = 5) writeonly uniform image2D weights;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    ivec2 frameSize;
    vec2 inverseFrame;
    float strength;
} parameters;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.frameSize))) {
        return;
    }
    vec4 source = texelFetch(original, pixel, 0);
    float weight = 0.0;
    float spot = 0.0;
    vec4 result = source;
    if (beautyInRegion(pixel, parameters.origin, parameters.size)) {
        vec4 m = texture(mask, (vec2(pixel) + 0.5) * parameters.inverseFrame);
        weight = clamp(m.r * m.g * parameters.strength, 0.0, 1.0);
        vec4 fixedPixel = texelFetch(spotFixed, pixel, 0);
        // Spot fills exist only where the mask permits them (the spot stage writes its
        // faces' regions only, not all of this one).
        spot = m.b > 0.0 ? fixedPixel.a : 0.0;
        if (weight > 0.0 || spot > 0.0) {
            vec3 start = spot > 0.0 ? fixedPixel.rgb : source.rgb;
            result = vec4(mix(start, texelFetch(processed, pixel, 0).rgb, weight), source.a);
        }
    }
    imageStore(destination, pixel, result);
    if (WRITE_WEIGHTS != 0) {
        imageStore(weights, pixel, vec4(max(weight, spot)));
    }
}
