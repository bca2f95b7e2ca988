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
//
// Geometry, per face 28 floats: box x0 y0 x1 y1 (anything can change); lip box x0 y0 x1 y1
// (grown by the feather); feather; outer loop first float, count; inner loop first, count;
// 3 unused; two blush patches of 6 floats: centre x y, major axis / a (x y), minor axis / b (x y).
// Then the loop vertices (x y pairs). Copied to shared memory once per workgroup.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int MAX_FLOATS = 1024;
const int FACE_STRIDE = 28;
const int BLEND_NATURAL = 0;
const int BLEND_MULTIPLY = 1;
const int BLEND_SOFT_LIGHT = 2;
// Luma of typical lips in the working space: the natural blend gives a lip pixel of this
// luma the lipstick's own luma, and scales the rest in proportion (shading and texture stay).
const float LIP_REFERENCE_LUMA = 0.45;
// Share of the blush colour mixed in at a patch centre at strength 1.
const float BLUSH_PEAK = 0.5;

layout(binding = 0) uniform sampler2D source;   // nearest
layout(binding = 1) buffer Geometry { float data[]; } geometry;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 regionSize;
    int floatCount;
    int faceCount;
    int blend;
    vec4 lipColour;    // rgb, strength
    vec4 blushColour;  // rgb, strength
} parameters;

shared float table[MAX_FLOATS];

// Signed distance from p to a closed polygon (negative inside), even-odd rule.
float polygonDistance(vec2 p, int first, int count) {
    float nearest = 1e20;
    bool inside = false;
    vec2 a = vec2(table[first + 2 * (count - 1)], table[first + 2 * (count - 1) + 1]);
    for (int i = 0; i < count; ++i) {
        vec2 b = vec2(table[first + 2 * i], table[first + 2 * i + 1]);
        vec2 edge = b - a;
        vec2 toP = p - a;
        float along = clamp(dot(toP, edge) / max(dot(edge, edge), 1e-12), 0.0, 1.0);
        vec2 offset = toP - edge * along;
        nearest = min(nearest, dot(offset, offset));
        if ((a.y > p.y) != (b.y > p.y) && p.x < a.x + (p.y - a.y) * edge.x / edge.y) {
            inside = !inside;
        }
        a = b;
    }
    float distance = sqrt(nearest);
    return inside ? -distance : distance;
}

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
    vec4 original = texelFetch(source, pixel, 0);
    float blush = 0.0;
    float lips = 0.0;
    for (int face = 0; face < parameters.faceCount; ++face) {
        int header = face * FACE_STRIDE;
        if (p.x < table[header] || p.y < table[header + 1] || p.x > table[header + 2] || p.y > table[header + 3]) {
            continue;
        }
        for (int cheek = 0; cheek < 2; ++cheek) {
            int base = header + 16 + 6 * cheek;
            vec2 v = p - vec2(table[base], table[base + 1]);
            vec2 q = vec2(dot(v, vec2(table[base + 2], table[base + 3])), dot(v, vec2(table[base + 4], table[base + 5])));
            float r2 = dot(q, q);
            if (r2 < 1.0) {
                blush = max(blush, (1.0 - r2) * (1.0 - r2));
            }
        }
        if (p.x >= table[header + 4] && p.y >= table[header + 5] && p.x <= table[header + 6] && p.y <= table[header + 7]) {
            float feather = table[header + 8];
            float outer = polygonDistance(p, int(table[header + 9]), int(table[header + 10]));
            if (outer < feather) {
                float inner = polygonDistance(p, int(table[header + 11]), int(table[header + 12]));
                lips = max(lips, (1.0 - smoothstep(-feather, feather, outer)) * smoothstep(-feather, feather, inner));
            }
        }
    }
    vec3 colour = original.rgb;
    float blushWeight = blush * BLUSH_PEAK * parameters.blushColour.a;
    if (blushWeight > 0.0) {
        colour = mix(colour, withLuma(parameters.blushColour.rgb, clamp(beautyLuma(colour), 0.0, 1.0)), blushWeight);
    }
    float lipWeight = lips * parameters.lipColour.a;
    if (lipWeight > 0.0) {
        colour = mix(colour, lipBlend(colour, parameters.lipColour.rgb), lipWeight);
    }
    imageStore(destination, pixel, blushWeight > 0.0 || lipWeight > 0.0 ? vec4(colour, original.a) : original);
}
