#version 450
#extension GL_GOOGLE_include_directive : enable
// Resamples a photo under a similarity transform (synthetic clips with known motion):
// output pixel p reads source position A * (p - outputCentre) + sourceCentre with bilinear
// filtering and a replicated border, then adds optional Gaussian noise from a per-frame seed.
#include "common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;        // linear sampler
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 outputSize;
    ivec2 sourceSize;
    vec4 matrix;         // A = [x y; z w], output pixels -> source pixels
    vec2 outputCentre;
    vec2 sourceCentre;
    float noiseSigma;    // in 0...1 units; 0 for none
    uint seed;
} parameters;

// A well-mixed 32-bit hash (lowbias32), so each pixel and frame draws independent noise.
uint mixBits(uint x) {
    x ^= x >> 16; x *= 0x7feb352dU;
    x ^= x >> 15; x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

float uniform01(uint x) {
    return (float(mixBits(x) >> 8) + 0.5) / 16777216.0;
}

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.outputSize))) {
        return;
    }
    vec2 offset = vec2(pixel) + 0.5 - parameters.outputCentre;
    vec2 position = vec2(dot(parameters.matrix.xy, offset), dot(parameters.matrix.zw, offset)) + parameters.sourceCentre;
    vec4 colour = texture(source, position / vec2(parameters.sourceSize));
    if (parameters.noiseSigma > 0.0) {
        uint base = mixBits(uint(pixel.y * parameters.outputSize.x + pixel.x) ^ mixBits(parameters.seed)) * 3u;
        for (int channel = 0; channel < 3; ++channel) {
            // Box-Muller from two uniform draws.
            float u1 = uniform01(base + uint(channel) * 2u), u2 = uniform01(base + uint(channel) * 2u + 1u);
            colour[channel] += parameters.noiseSigma * sqrt(-2.0 * log(u1)) * cos(6.28318530718 * u2);
        }
    }
    imageStore(destination, pixel, vec4(colour.rgb, 1.0));
}
