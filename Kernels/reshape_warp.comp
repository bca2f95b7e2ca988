#version 450
#extension GL_GOOGLE_include_directive : enable
// Face reshape as one backward warp: output pixel p shows the input at p + d(p), sampled
// bilinearly, where d sums per face two eye magnifiers and the jaw-narrowing translations
// (formula and reach documented in ReshapeField.swift, which evaluates the same field on
// the CPU). Dispatched over the reshape region only, after the host copied the frame to
// the destination; a pixel whose displacement is exactly zero is copied texel for texel.
//
// Geometry buffer, per face 16 floats: box x0 y0 x1 y1 (pixels that can move); right eye
// cx cy 1/R^2 a; left eye cx cy 1/R^2 a; rho; anchor count; first anchor float; eye count.
// Then the anchors, 4 floats each: position x y, forward translation x y. Each workgroup
// copies the table to shared memory once (per-lane storage-buffer reads are slow on lavapipe).
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int MAX_FLOATS = 512;
const int FACE_STRIDE = 16;

layout(binding = 0) uniform sampler2D source;      // linear sampler
layout(binding = 1) buffer Geometry { float data[]; } geometry;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;      // region of the dispatch
    ivec2 regionSize;
    vec2 inverseSize;  // 1 / frame size
    int floatCount;
    int faceCount;
} parameters;

shared float table[MAX_FLOATS];

void main() {
    uint local = gl_LocalInvocationIndex;
    int count = min(parameters.floatCount, MAX_FLOATS);
    for (int i = int(local); i < count; i += 256) {
        table[i] = geometry.data[i];
    }
    barrier();

    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(offset, parameters.regionSize))) {
        return;
    }
    ivec2 pixel = parameters.origin + offset;
    vec2 p = vec2(pixel) + 0.5;
    vec2 d = vec2(0.0);
    for (int face = 0; face < parameters.faceCount; ++face) {
        int header = face * FACE_STRIDE;
        if (p.x < table[header] || p.y < table[header + 1] || p.x > table[header + 2] || p.y > table[header + 3]) {
            continue;
        }
        int eyes = int(table[header + 15]);
        for (int eye = 0; eye < eyes; ++eye) {
            int base = header + 4 + 4 * eye;
            vec2 v = p - vec2(table[base], table[base + 1]);
            float u = dot(v, v) * table[base + 2];
            if (u < 1.0) {
                d -= table[base + 3] * (1.0 - u) * (1.0 - u) * v;
            }
        }
        float rho = table[header + 12];
        int anchors = int(table[header + 13]);
        int first = int(table[header + 14]);
        vec2 sum = vec2(0.0);
        float weights = 0.0;
        for (int k = 0; k < anchors; ++k) {
            int base = first + 4 * k;
            float w = max(0.0, 1.0 - length(p - vec2(table[base], table[base + 1])) / rho);
            sum += w * vec2(table[base + 2], table[base + 3]);
            weights += w;
        }
        d -= sum / max(1.0, weights);
    }
    vec4 colour = d == vec2(0.0) ? texelFetch(source, pixel, 0) : texture(source, (p + d) * parameters.inverseSize);
    imageStore(destination, pixel, colour);
}
