#version 450
#extension GL_GOOGLE_include_directive : enable
// One face's pass of the skin mask, the zone-intensity map and the spot-removal
// permission, drawn in shader space from mesh polygons (no CPU rasterisation). The passes
// run one per face over the face's reach; each keeps, per mask pixel, the face whose
// radial gradient x person probability is highest (so every face has a mask of its own
// shape and overlapping faces meet where their weights cross, without a seam):
//   r: skin = that highest value x the holes of every face (one face's eyes, brows, lips
//      and nostrils are holes in any face's skin reaching over them)
//   g: zone intensity of the face that gives the pixel its skin value
//   b: where spot removal may act: inside a face oval, outside every eye/brow/lip/nose
//   a: the highest gradient x person so far (before holes), which the next pass compares
// and, in `owner`, the index of that face (-1: none), which the size-dependent stages
// read to know whose scale a pixel takes. The first pass covers the whole mask and
// starts it empty; the others read what the earlier ones wrote.
// Geometry layout: SkinMaskGeometry.swift, read through face_table.glsl.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int HEADER_STRIDE = 10;
const int POLYGON_STRIDE = 8;
const int ROLE_OVAL = 0;
const int ROLE_HOLE = 1;
const int ROLE_EXCLUSION = 2;
const int ROLE_ZONE = 3;

layout(binding = 0) uniform sampler2D personBlurred; // linear sampler, frame-shaped grid
layout(binding = 1, rgba32f) readonly uniform imageBuffer geometryTexels;
layout(binding = 2, rgba16f) uniform image2D destination;
layout(binding = 3, r16f) uniform image2D owner;
layout(binding = 4) readonly buffer GeometryWords { float data[]; } geometryWords; // the table again, as words (face_table.glsl)

layout(push_constant) uniform Parameters {
    ivec2 size;        // mask size
    vec2 pixelScale;   // frame pixels per mask pixel (x, y)
    vec2 frameSize;    // frame size in pixels
    int faceCount;
    int face;          // the face this pass draws
    int firstPass;     // 1: start from an empty mask and cover all of it
    float elsewhere;   // zone intensity of skin outside every zone polygon
    vec2 personRamp;   // blurred person probability remapped by smoothstep(x, y, p)
    ivec2 origin;      // mask pixels this pass covers: origin ... origin + extent
    ivec2 extent;
} parameters;

#define FACE_COUNT parameters.faceCount
#define FACE_TABLE_DIRECT
#include "face_table.glsl"

// How much of the polygon `polygon` (index within the face's block) covers p, as the
// roles define it; 0 when p is farther than its reach.
float polygonCover(vec2 p, int slot, int polygon, float feather, float zoneFeather) {
    int entry = HEADER_STRIDE + polygon * POLYGON_STRIDE;
    int role = int(faceValue(slot, entry + 2));
    float width = role == ROLE_ZONE ? zoneFeather : feather;
    float reach = role == ROLE_HOLE || role == ROLE_EXCLUSION ? 2.0 * width : width;
    vec4 bounds = vec4(faceValue(slot, entry + 4), faceValue(slot, entry + 5), faceValue(slot, entry + 6), faceValue(slot, entry + 7));
    if (p.x < bounds.x - reach || p.y < bounds.y - reach || p.x > bounds.z + reach || p.y > bounds.w + reach) {
        return 0.0;
    }
    float sd = facePolygonDistance(p, slot, int(faceValue(slot, entry)), int(faceValue(slot, entry + 1)));
    // Holes and exclusions are solid up to their (grown) outline and fade out over
    // 2 x feather beyond it, so the feature's surroundings stay untouched too; the oval
    // (spot removal's reach) fades out inside its outline, the zones across theirs.
    return role == ROLE_HOLE || role == ROLE_EXCLUSION ? 1.0 - smoothstep(0.0, 2.0 * width, sd)
        : role == ROLE_OVAL ? 1.0 - smoothstep(-2.0 * width, 0.0, sd)
        : 1.0 - smoothstep(-width, width, sd);
}

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    bool inPass = all(lessThan(ivec2(gl_GlobalInvocationID.xy), parameters.extent)) && all(lessThan(pixel, parameters.size));
    vec2 p = (vec2(pixel) + 0.5) * parameters.pixelScale;

    vec4 previous = vec4(0.0, parameters.elsewhere, 0.0, 0.0);
    float previousOwner = -1.0;
    if (inPass && parameters.firstPass == 0) {
        previous = imageLoad(destination, pixel);
        previousOwner = imageLoad(owner, pixel).r;
    }

    // The workgroup's frame box decides which faces it must read (a uniform test: every
    // lane reads the same face).
    ivec2 groupOrigin = parameters.origin + ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy);
    vec2 groupLow = vec2(groupOrigin) * parameters.pixelScale;
    vec2 groupHigh = vec2(groupOrigin + ivec2(gl_WorkGroupSize.xy)) * parameters.pixelScale;
    bool groupReached = faceBoxMeets(faceBox(parameters.face), groupLow, groupHigh);

    float candidate = 0.0;
    float zone = parameters.elsewhere;
    float oval = 0.0;
    float holes = 1.0;
    float allowed = 1.0;
    if (groupReached) {
        for (int face = 0; face < parameters.faceCount; ++face) {
            if (!faceBoxMeets(faceBox(face), groupLow, groupHigh)) {
                continue;
            }
            bool own = face == parameters.face;
            float feather = faceValue(face, 4);
            float zoneFeather = faceValue(face, 5);
            int polygons = int(faceValue(face, 6));
            float zoneSum = 0.0;
            float zoneWeight = 0.0;
            for (int k = 0; k < polygons; ++k) {
                int role = int(faceValue(face, HEADER_STRIDE + k * POLYGON_STRIDE + 2));
                if (!own && (role == ROLE_OVAL || role == ROLE_ZONE)) {
                    continue; // another face lends only its holes
                }
                float cover = polygonCover(p, face, k, feather, zoneFeather);
                if (role == ROLE_HOLE) {
                    holes *= 1.0 - cover;
                    allowed *= 1.0 - cover;
                } else if (role == ROLE_EXCLUSION) {
                    allowed *= 1.0 - cover;
                } else if (role == ROLE_OVAL) {
                    oval = cover;
                } else {
                    zoneSum += cover * faceValue(face, HEADER_STRIDE + k * POLYGON_STRIDE + 3);
                    zoneWeight += cover;
                }
            }
            if (own) {
                vec2 centre = vec2(faceValue(face, 0), faceValue(face, 1));
                float gradient = 1.0 - smoothstep(faceValue(face, 2), faceValue(face, 3), length(p - centre));
                // Nothing farther out than the limit beyond the oval (polygon 0): the
                // radial gradient would reach past it on a face seen from the side.
                float outside = facePolygonDistance(p, face, int(faceValue(face, HEADER_STRIDE)),
                                                    int(faceValue(face, HEADER_STRIDE + 1)));
                float limit = faceValue(face, 8);
                gradient *= 1.0 - smoothstep(limit - 2.0 * feather, limit, outside);
                // The mesh's own oval counts as person: segmentation (a selfie model) can
                // miss small and distant people, but not remove a face the mesh found.
                float person = max(smoothstep(parameters.personRamp.x, parameters.personRamp.y,
                                              texture(personBlurred, p / parameters.frameSize).r), oval);
                candidate = gradient * person;
                zone = (zoneSum + max(0.0, 1.0 - zoneWeight) * parameters.elsewhere) / max(1.0, zoneWeight);
            }
        }
    }
    if (!inPass || (!groupReached && parameters.firstPass == 0)) {
        return; // an earlier pass's value stands
    }
    vec4 result = previous;
    float resultOwner = previousOwner;
    if (candidate > previous.a) {
        result.a = candidate;
        result.g = zone;
        resultOwner = float(parameters.face);
    }
    result.r = result.a * holes;
    result.b = max(previous.b, oval * allowed);
    imageStore(destination, pixel, result);
    imageStore(owner, pixel, vec4(resultOwner));
}
