#version 450
#extension GL_GOOGLE_include_directive : enable
// Lipstick and blush in one pass, from each frame's mesh (geometry packed by
// MakeupGeometry.swift). Blush: soft elliptical cheek patches, weight (1 - r^2)^2 inside
// the ellipse, the blush's hue and saturation at the skin's own luma (texture kept).
// Lipstick on top: coverage = inside the outer lip loop x outside the inner loop (mouth
// opening), each edge feathered over +-feather pixels, colour blended as chosen (natural, multiply, soft light), mixed in by
// coverage x strength. Every blend keeps the base's luma variation, so lip texture stays.
// Dispatched over the makeup region only, after the host copied the frame to the
// destination; a pixel neither effect touches is copied texel for texel.
// PART: one pass (GPUs), or on a CPU Vulkan (lavapipe), which runs both sides of every
// branch for every pixel, the lip area apart: BLUSH over the region leaves the lip area
// unwritten and has no lipstick code at all, then ALL over the lip area alone. Each pixel is
// written once, with what one pass would write, so the destination may be the source.
//
// Geometry (MakeupGeometry.packed, read through face_table.glsl): per face a block of lip
// box x0 y0 x1 y1 (grown by the feather); feather; outer loop first float, count; inner
// loop first, count; two blush patches of 6 floats: centre x y, major axis / a (x y),
// minor axis / b (x y); then the loop vertices (x y pairs).
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int PART_ALL = 0;
const int PART_BLUSH = 1;
layout(constant_id = 0) const int PART = PART_ALL;

const int BLEND_NATURAL = 0;
const int BLEND_MULTIPLY = 1;
const int BLEND_SOFT_LIGHT = 2;
// Luma of typical lips in the working space: the natural blend gives a lip pixel of this
// luma the lipstick's own luma, and scales the rest in proportion (shading and texture stay).
const float LIP_REFERENCE_LUMA = 0.45;
// Share of the blush colour mixed in at a patch centre at strength 1.
const float BLUSH_PEAK = 0.5;

layout(binding = 0) uniform sampler2D source;   // nearest
layout(binding = 1, rgba32f) readonly uniform imageBuffer geometryTexels;
layout(binding = 2) writeonly uniform image2D destination;
layout(binding = 3) readonly buffer GeometryWords { float data[]; } geometryWords; // the table again, as words (face_table.glsl)

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 regionSize;
    int faceCount;
    int blend;
    vec4 lipColour;    // rgb, strength
    vec4 blushColour;  // rgb, strength
    ivec2 lipOrigin;   // the lip area (PART_BLUSH leaves it to the other pass)
    ivec2 lipSize;
} parameters;

#define FACE_COUNT parameters.faceCount
#define FACE_TABLE_DIRECT
#include "face_table.glsl"

vec3 softLight(vec3 base, vec3 blend) {
    vec3 b = clamp(base, 0.0, 1.0);
    vec3 d = mix(sqrt(b), ((16.0 * b - 12.0) * b + 4.0) * b, lessThanEqual(b, vec3(0.25)));
    return mix(b + (2.0 * blend - 1.0) * (d - b), b - (1.0 - 2.0 * blend) * b * (1.0 - b), lessThanEqual(blend, vec3(0.5)));
}

// `colour` moved to luma `target`, brought back into 0...1 keeping its hue (W3C SetLum/ClipColor).
vec3 withLuma(vec3 colour, float target) {
    vec3 c = colour + (target - beautyLuma(colour));
    float l = beautyLuma(c);
    float low = min(c.r, min(c.g, c.b));
    float high = max(c.r, max(c.g, c.b));
    if (low < 0.0) {
        c = l + (c - l) * l / max(l - low, 1e-6);
    }
    if (high > 1.0) {
        c = l + (c - l) * (1.0 - l) / max(high - l, 1e-6);
    }
    return c;
}

vec3 lipBlend(vec3 base, vec3 colour) {
    if (parameters.blend == BLEND_MULTIPLY) {
        return base * colour;
    }
    if (parameters.blend == BLEND_SOFT_LIGHT) {
        return softLight(base, colour);
    }
    float scale = beautyLuma(colour) / LIP_REFERENCE_LUMA;
    return withLuma(colour, clamp(beautyLuma(base) * scale, 0.0, 1.0));
}

void main() {
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = parameters.origin + offset;
    vec2 p = vec2(pixel) + 0.5;
    float blush = 0.0;
    float lips = 0.0;
    for (int face = 0; face < parameters.faceCount; ++face) {
        if (!faceBoxMeets(faceBox(face), p, p)) {
            continue;
        }
        float weight = faceValue(face, 21); // the face's share (a held face fades out)
        for (int cheek = 0; cheek < 2; ++cheek) {
            int base = 9 + 6 * cheek;
            vec2 v = p - facePoint(face, base);
            vec2 q = vec2(dot(v, facePoint(face, base + 2)), dot(v, facePoint(face, base + 4)));
            float r2 = dot(q, q);
            if (r2 < 1.0) {
                blush = max(blush, weight * ((1.0 - r2) * (1.0 - r2)));
            }
        }
        if (PART != PART_BLUSH && faceBoxMeets(vec4(facePoint(face, 0), facePoint(face, 2)), p, p)) {
            float feather = faceValue(face, 4);
            float outer = facePolygonDistance(p, face, int(faceValue(face, 5)), int(faceValue(face, 6)));
            if (outer < feather) {
                float inner = facePolygonDistance(p, face, int(faceValue(face, 7)), int(faceValue(face, 8)));
                lips = max(lips, weight * ((1.0 - smoothstep(-feather, feather, outer)) * smoothstep(-feather, feather, inner)));
            }
        }
    }
    if (any(greaterThanEqual(offset, parameters.regionSize))) {
        return;
    }
    if (PART == PART_BLUSH && beautyInRegion(pixel, parameters.lipOrigin, parameters.lipSize)) {
        return;
    }
    vec4 original = texelFetch(source, pixel, 0);
    vec3 colour = original.rgb;
    float blushWeight = blush * BLUSH_PEAK * parameters.blushColour.a;
    if (blushWeight > 0.0) {
        colour = mix(colour, withLuma(parameters.blushColour.rgb, clamp(beautyLuma(colour), 0.0, 1.0)), blushWeight);
    }
    float lipWeight = lips * parameters.lipColour.a;
    if (PART != PART_BLUSH && lipWeight > 0.0) {
        colour = mix(colour, lipBlend(colour, parameters.lipColour.rgb), lipWeight);
    }
    imageStore(destination, pixel, blushWeight > 0.0 || lipWeight > 0.0 ? vec4(colour, original.a) : original);
}
