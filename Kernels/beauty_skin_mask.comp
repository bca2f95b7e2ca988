#version 450
#extension GL_GOOGLE_include_directive : enable
// The skin mask, the zone-intensity map and the spot-removal permission, drawn in shader
// space from mesh polygons (no CPU rasterisation). One invocation per mask pixel:
//   r: skin = max over faces(radial gradient x feature holes) x remapped blurred person mask
//   g: zone intensity of the face that gives the pixel its skin value
//   b: where spot removal may act: inside the face oval, outside eyes/brows/lips/nose
// Polygons come grown and in frame pixels from the host, packed as floats (see
// SkinMaskGeometry.swift); each workgroup copies them to shared memory once, because
// per-lane storage-buffer reads in the inner loop are slow on lavapipe.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int MAX_FLOATS = 4096;
const int FACE_STRIDE = 16;
const int POLYGON_STRIDE = 8;
const int ROLE_OVAL = 0;
const int ROLE_HOLE = 1;
const int ROLE_EXCLUSION = 2;
const int ROLE_ZONE = 3;

layout(binding = 0) uniform sampler2D personBlurred; // linear sampler, frame-shaped grid
layout(binding = 1) buffer Geometry { float data[]; } geometry;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;        // mask size
    vec2 pixelScale;   // frame pixels per mask pixel (x, y)
    vec2 frameSize;    // frame size in pixels
    int floatCount;    // floats used in the geometry buffer
    int faceCount;
    float elsewhere;   // zone intensity of skin outside every zone polygon
    vec2 personRamp;   // blurred person probability remapped by smoothstep(x, y, p)
    vec4 reach;        // mask pixels any face can touch: x0, y0, x1, y1 (exclusive)
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

void main() {
    // A workgroup wholly outside every face writes zeros and skips the polygon table
    // (a uniform decision, so the barrier below stays legal).
    vec2 groupLow = vec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy);
    vec2 groupHigh = groupLow + vec2(gl_WorkGroupSize.xy);
    if (parameters.faceCount == 0 || groupHigh.x <= parameters.reach.x || groupHigh.y <= parameters.reach.y
        || groupLow.x >= parameters.reach.z || groupLow.y >= parameters.reach.w) {
        ivec2 outside = ivec2(gl_GlobalInvocationID.xy);
        if (all(lessThan(outside, parameters.size))) {
            imageStore(destination, outside, vec4(0.0, parameters.elsewhere, 0.0, 0.0));
        }
        return;
    }
    uint local = gl_LocalInvocationIndex;
    int count = min(parameters.floatCount, MAX_FLOATS);
    for (int i = int(local); i < count; i += 256) {
        table[i] = geometry.data[i];
    }
    barrier();

    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    vec2 p = (vec2(pixel) + 0.5) * parameters.pixelScale;
    float skin = 0.0;
    float zoneOut = parameters.elsewhere;
    float spots = 0.0;
    for (int face = 0; face < parameters.faceCount; ++face) {
        int header = face * FACE_STRIDE;
        vec2 centre = vec2(table[header], table[header + 1]);
        float innerRadius = table[header + 2];
        float outerRadius = table[header + 3];
        float feather = table[header + 4];
        float zoneFeather = table[header + 5];
        int firstPolygon = int(table[header + 6]);
        int polygonCount = int(table[header + 7]);
        vec4 box = vec4(table[header + 8], table[header + 9], table[header + 10], table[header + 11]);
        if (p.x < box.x || p.y < box.y || p.x > box.z || p.y > box.w) {
            continue;
        }
        float gradient = 1.0 - smoothstep(innerRadius, outerRadius, length(p - centre));
        float holes = 1.0;
        float allowed = 1.0;
        float oval = 0.0;
        float zoneSum = 0.0;
        float zoneWeight = 0.0;
        for (int k = 0; k < polygonCount; ++k) {
            int entry = firstPolygon + k * POLYGON_STRIDE;
            int role = int(table[entry + 2]);
            float width = role == ROLE_ZONE ? zoneFeather : feather;
            float reach = role == ROLE_HOLE || role == ROLE_EXCLUSION ? 2.0 * width : width;
            vec4 bounds = vec4(table[entry + 4], table[entry + 5], table[entry + 6], table[entry + 7]);
            if (p.x < bounds.x - reach || p.y < bounds.y - reach || p.x > bounds.z + reach || p.y > bounds.w + reach) {
                continue; // farther than the feather from the polygon: coverage 0
            }
            float sd = polygonDistance(p, int(table[entry]), int(table[entry + 1]));
            // Holes and exclusions are solid up to their (grown) outline and fade out over
            // 2 x feather beyond it, so the feature's surroundings stay untouched too; the
            // oval (spot removal's reach) fades out inside its outline, the zones across theirs.
            float cover = role == ROLE_HOLE || role == ROLE_EXCLUSION
                ? 1.0 - smoothstep(0.0, 2.0 * width, sd)
                : role == ROLE_OVAL ? 1.0 - smoothstep(-2.0 * width, 0.0, sd)
                : 1.0 - smoothstep(-width, width, sd);
            if (role == ROLE_HOLE) {
                holes *= 1.0 - cover;
                allowed *= 1.0 - cover;
            } else if (role == ROLE_EXCLUSION) {
                allowed *= 1.0 - cover;
            } else if (role == ROLE_OVAL) {
                oval = cover;
            } else {
                zoneSum += cover * table[entry + 3];
                zoneWeight += cover;
            }
        }
        float faceSkin = gradient * holes;
        if (faceSkin > skin) {
            skin = faceSkin;
            zoneOut = (zoneSum + max(0.0, 1.0 - zoneWeight) * parameters.elsewhere) / max(1.0, zoneWeight);
        }
        spots = max(spots, oval * allowed);
    }
    float person = smoothstep(parameters.personRamp.x, parameters.personRamp.y,
                              texture(personBlurred, p / parameters.frameSize).r);
    imageStore(destination, pixel, vec4(skin * person, zoneOut, spots, 0.0));
}
