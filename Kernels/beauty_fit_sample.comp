#version 450
#extension GL_GOOGLE_include_directive : enable
// Strength fit, step 1: samples each face's disc patches into the atlas (layout in
// beauty_fit_common.glsl): r = Y'(A), g = Y'(B), b = m x (Y'(C) - Y'(B)) with m the blend
// weight at gain 1 (skin x zone), a = m inside the disc and the frame, -1 outside. Each
// sample averages its pitch x pitch footprint (a box prefilter, so finer detail does
// not alias into the bands). A: the input; B: the spot-fixed image; C: the smoothed one.
// With MEASURE set, C is unused (b = 0): A the input, B the output.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int MEASURE = 0;

layout(binding = 0) uniform sampler2D imageA; // linear
layout(binding = 1) uniform sampler2D imageB; // linear
layout(binding = 2) uniform sampler2D imageC; // linear
layout(binding = 3) uniform sampler2D mask;   // linear
layout(binding = 4, rgba32f) readonly uniform imageBuffer paramTexels;
layout(binding = 5) writeonly uniform image2D atlas;

layout(push_constant) uniform Parameters {
    vec2 frameSize;
    int faceCount;
} parameters;

#include "beauty_fit_common.glsl"

void main() {
    ivec2 cell = ivec2(gl_GlobalInvocationID.xy);
    int face = cell.y / FIT_PATCH;
    int disc = cell.x / FIT_PATCH;
    if (face >= parameters.faceCount || disc >= FIT_DISCS) {
        return;
    }
    ivec2 ij = cell % FIT_PATCH;
    int samples = fitSamples(face);
    if (any(greaterThanEqual(ij, ivec2(samples)))) {
        imageStore(atlas, cell, vec4(0.0, 0.0, 0.0, -1.0));
        return;
    }
    float pitch = fitPitch(face);
    vec2 position = fitSamplePosition(face, disc, ij);
    int taps = max(1, int(ceil(pitch - 1e-3)));
    vec3 sum = vec3(0.0);
    float weightSum = 0.0;
    for (int ty = 0; ty < taps; ++ty) {
        for (int tx = 0; tx < taps; ++tx) {
            vec2 q = position + ((vec2(tx, ty) + 0.5) / float(taps) - 0.5) * pitch;
            vec2 uv = q / parameters.frameSize;
            float a = beautyLuma(texture(imageA, uv).rgb);
            float b = beautyLuma(texture(imageB, uv).rgb);
            vec4 m = texture(mask, uv);
            // The blend's weight at gain 1, with its fade-in from the frame's edge.
            float edge = min(min(q.x, q.y), min(parameters.frameSize.x - q.x, parameters.frameSize.y - q.y));
            float weight = clamp(m.r * m.g, 0.0, 1.0) * smoothstep(0.0, max(fitEdgeReach(face), 1e-3), edge);
            float change = MEASURE != 0 ? 0.0 : weight * (beautyLuma(texture(imageC, uv).rgb) - b);
            sum += vec3(a, b, change);
            weightSum += weight;
        }
    }
    float count = float(taps * taps);
    bool inside = distance(position, fitDiscCentre(face, disc)) <= fitRadius(face)
        && all(greaterThanEqual(position, vec2(0.0))) && all(lessThan(position, parameters.frameSize));
    imageStore(atlas, cell, vec4(sum / count, inside ? weightSum / count : -1.0));
}
