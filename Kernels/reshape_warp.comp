#version 450
#extension GL_GOOGLE_include_directive : enable
// Face reshape as one backward warp: output pixel p shows the input at p + d(p), sampled
// bilinearly, where d sums per face two eye magnifiers and the jaw-narrowing translations
// (formula and reach documented in ReshapeField.swift, which evaluates the same field on
// the CPU). Dispatched over the tiles of the reshape region where some term can move a pixel,
// one workgroup per tile, each summing only the terms that reach it (`ReshapeField.tiles`: a
// term left out adds exactly zero), after the host copied the frame to the destination; a
// pixel whose displacement is exactly zero is copied texel for texel.
//
// Geometry (ReshapeField.packed, read through face_table.glsl): per face a block of right
// eye cx cy 1/R^2 a, left eye cx cy 1/R^2 a, rho, anchor count, eye count; then the anchors,
// 4 floats each: position x y, forward translation x y.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int BLOCK_HEADER = 11;

layout(binding = 0) uniform sampler2D source;      // linear sampler
layout(binding = 1, rgba32f) readonly uniform imageBuffer geometryTexels;
layout(binding = 2) writeonly uniform image2D destination;
// The tile and term lists as RGBA32UI texels, read as the face table is (face_table.glsl: a
// texel fetch is one gather on lavapipe).
layout(binding = 3, rgba32ui) readonly uniform uimageBuffer tileTexels; // per tile: origin x y, first term, term count
layout(binding = 4, rgba32ui) readonly uniform uimageBuffer termTexels; // 4 a texel: face << 16 | anchor << 15 | index
layout(binding = 5) readonly buffer GeometryWords { float data[]; } geometryWords; // the table again, as words (face_table.glsl)

layout(push_constant) uniform Parameters {
    ivec2 origin;      // region of the dispatch
    ivec2 regionSize;
    vec2 inverseSize;  // 1 / frame size
    int faceCount;
    int tileCount;
} parameters;

#define FACE_COUNT parameters.faceCount
#define FACE_TABLE_DIRECT
#include "face_table.glsl"

void main() {
    int tile = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
    if (tile >= parameters.tileCount) {
        return;
    }
    ivec4 entry = ivec4(imageLoad(tileTexels, tile));
    ivec2 pixel = entry.xy + ivec2(gl_LocalInvocationID.xy);
    vec2 p = vec2(pixel) + 0.5;
    vec2 d = vec2(0.0);
    // Per face, in order: its eyes, then its anchors' weighted mean (the field's order).
    int face = -1;
    bool reached = false;
    vec2 sum = vec2(0.0);
    float weights = 0.0;
    for (int i = 0; i < entry.w; ++i) {
        int slot = entry.z + i;
        uint term = imageLoad(termTexels, slot >> 2)[slot & 3];
        int termFace = int(term >> 16);
        if (termFace != face) {
            d -= sum / max(1.0, weights);
            sum = vec2(0.0);
            weights = 0.0;
            face = termFace;
            reached = faceBoxMeets(faceBox(face), p, p);
        }
        if (!reached) {
            continue;
        }
        int index = int(term & 0x7fffu);
        if ((term & 0x8000u) == 0u) {
            int base = 4 * index;
            vec2 v = p - facePoint(face, base);
            float u = dot(v, v) * faceValue(face, base + 2);
            if (u < 1.0) {
                d -= faceValue(face, base + 3) * (1.0 - u) * (1.0 - u) * v;
            }
        } else {
            int base = BLOCK_HEADER + 4 * index;
            float w = max(0.0, 1.0 - length(p - facePoint(face, base)) / faceValue(face, 8));
            sum += w * facePoint(face, base + 2);
            weights += w;
        }
    }
    d -= sum / max(1.0, weights);
    // Near the frame's edge the displacement shrinks to half the way there, so the edge maps
    // onto itself and nothing is read past it: the sampler would repeat the outermost column
    // (a face cut by the edge with a line there got a 3-pixel band of it across the cheek).
    vec2 size = vec2(textureSize(source, 0));
    d = clamp(d, -0.5 * (p - 0.5), 0.5 * (size - 0.5 - p));
    if (!beautyInRegion(pixel, parameters.origin, parameters.regionSize)) {
        return;
    }
    vec4 colour = d == vec2(0.0) ? texelFetch(source, pixel, 0) : texture(source, (p + d) * parameters.inverseSize);
    imageStore(destination, pixel, colour);
}
