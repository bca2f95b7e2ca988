#version 450
#extension GL_GOOGLE_include_directive : enable
// Face reshape as one backward warp: output pixel p shows the input at p + d(p), sampled
// bilinearly, where d sums per face two eye magnifiers and the jaw-narrowing translations
// (formula and reach documented in ReshapeField.swift, which evaluates the same field on
// the CPU). Dispatched over the reshape region only, after the host copied the frame to
// the destination; a pixel whose displacement is exactly zero is copied texel for texel.
//
// Geometry (ReshapeField.packed, read through face_table.glsl): per face a block of right
// eye cx cy 1/R^2 a, left eye cx cy 1/R^2 a, rho, anchor count, eye count; then the anchors,
// 4 floats each: position x y, forward translation x y.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int BLOCK_HEADER = 11;

layout(binding = 0) uniform sampler2D source;      // linear sampler
layout(binding = 1) readonly buffer Geometry { float data[]; } geometry;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;      // region of the dispatch
    ivec2 regionSize;
    vec2 inverseSize;  // 1 / frame size
    int faceCount;
} parameters;

#define FACE_COUNT parameters.faceCount
#define FACE_TABLE_DIRECT
#include "face_table.glsl"

void main() {
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = parameters.origin + offset;
    vec2 p = vec2(pixel) + 0.5;
    vec2 d = vec2(0.0);
    for (int face = 0; face < parameters.faceCount; ++face) {
        if (!faceBoxMeets(faceBox(face), p, p)) {
            continue;
        }
        int eyes = int(faceValue(face, 10));
        for (int eye = 0; eye < eyes; ++eye) {
            int base = 4 * eye;
            vec2 v = p - facePoint(face, base);
            float u = dot(v, v) * faceValue(face, base + 2);
            if (u < 1.0) {
                d -= faceValue(face, base + 3) * (1.0 - u) * (1.0 - u) * v;
            }
        }
        float rho = faceValue(face, 8);
        int anchors = int(faceValue(face, 9));
        vec2 sum = vec2(0.0);
        float weights = 0.0;
        for (int k = 0; k < anchors; ++k) {
            int base = BLOCK_HEADER + 4 * k;
            float w = max(0.0, 1.0 - length(p - facePoint(face, base)) / rho);
            sum += w * facePoint(face, base + 2);
            weights += w;
        }
        d -= sum / max(1.0, weights);
    }
    if (any(greaterThanEqual(offset, parameters.regionSize))) {
        return;
    }
    vec4 colour = d == vec2(0.0) ? texelFetch(source, pixel, 0) : texture(source, (p + d) * parameters.inverseSize);
    imageStore(destination, pixel, colour);
}
