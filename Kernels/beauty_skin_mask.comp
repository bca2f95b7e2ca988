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
// Geometry layout: SkinMaskGeometry.swift. A workgroup copies the blocks of the faces that
// reach it to shared memory (per-lane storage-buffer reads in the polygon loops are slow
// on lavapipe), as many as fit; the rest it reads from the buffer.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int MAX_FLOATS = 4096;
const int MAX_SLOTS = 64;
const int DIRECTORY_STRIDE = 8;
const int HEADER_STRIDE = 8;
const int POLYGON_STRIDE = 8;
const int ROLE_OVAL = 0;
const int ROLE_HOLE = 1;
const int ROLE_EXCLUSION = 2;
const int ROLE_ZONE = 3;

layout(binding = 0) uniform sampler2D personBlurred; // linear sampler, frame-shaped grid
layout(binding = 1) buffer Geometry { float data[]; } geometry;
layout(binding = 2, rgba16f) uniform image2D destination;
layout(binding = 3, r16f) uniform image2D owner;

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

shared float table[MAX_FLOATS];
shared int slotFace[MAX_SLOTS];
shared int slotBase[MAX_SLOTS];   // block start in `table`, or -1: read from the buffer
shared int slotCount;
shared int tableUsed;

// A float of the face in `slot`, at `offset` within its block.
float faceValue(int slot, int offset) {
    int base = slotBase[slot];
    if (base >= 0) {
        return table[base + offset];
    }
    int face = slotFace[slot];
    return geometry.data[int(geometry.data[face * DIRECTORY_STRIDE]) + offset];
}

// Signed distance from p to a closed polygon of the face in `slot` (negative inside),
// even-odd rule; `first` is the offset of its first vertex within the block.
float polygonDistance(vec2 p, int slot, int first, int count) {
    float nearest = 1e20;
    bool inside = false;
    vec2 a = vec2(faceValue(slot, first + 2 * (count - 1)), faceValue(slot, first + 2 * (count - 1) + 1));
    for (int i = 0; i < count; ++i) {
        vec2 b = vec2(faceValue(slot, first + 2 * i), faceValue(slot, first + 2 * i + 1));
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

// Lists, from `firstFace` on, up to MAX_SLOTS faces whose reach meets the frame box
// (low, high), copying their blocks to shared memory while they fit.
void gatherFaces(int firstFace, vec2 low, vec2 high) {
    if (gl_LocalInvocationIndex == 0) {
        int count = 0;
        int used = 0;
        for (int face = firstFace; face < parameters.faceCount && count < MAX_SLOTS; ++face) {
            int entry = face * DIRECTORY_STRIDE;
            vec4 box = vec4(geometry.data[entry + 4], geometry.data[entry + 5], geometry.data[entry + 6], geometry.data[entry + 7]);
            if (box.z < low.x || box.w < low.y || box.x > high.x || box.y > high.y) {
                continue;
            }
            int length = int(geometry.data[entry + 1]);
            slotFace[count] = face;
            slotBase[count] = used + length <= MAX_FLOATS ? used : -1;
            used += slotBase[count] >= 0 ? length : 0;
            count += 1;
        }
        slotCount = count;
        tableUsed = used;
    }
    barrier();
    // Every invocation copies a share of every listed block.
    for (int slot = 0; slot < slotCount; ++slot) {
        int base = slotBase[slot];
        if (base < 0) {
            continue;
        }
        int entry = slotFace[slot] * DIRECTORY_STRIDE;
        int start = int(geometry.data[entry]);
        int length = int(geometry.data[entry + 1]);
        for (int i = int(gl_LocalInvocationIndex); i < length; i += 256) {
            table[base + i] = geometry.data[start + i];
        }
    }
    barrier();
}

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
    float sd = polygonDistance(p, slot, int(faceValue(slot, entry)), int(faceValue(slot, entry + 1)));
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

    // The workgroup's frame box decides which faces it must read: uniform, so the
    // barriers stay legal.
    ivec2 groupOrigin = parameters.origin + ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy);
    vec2 groupLow = vec2(groupOrigin) * parameters.pixelScale;
    vec2 groupHigh = vec2(groupOrigin + ivec2(gl_WorkGroupSize.xy)) * parameters.pixelScale;
    int entry = parameters.face * DIRECTORY_STRIDE;
    vec4 faceBox = vec4(geometry.data[entry + 4], geometry.data[entry + 5], geometry.data[entry + 6], geometry.data[entry + 7]);
    bool groupReached = !(faceBox.z < groupLow.x || faceBox.w < groupLow.y || faceBox.x > groupHigh.x || faceBox.y > groupHigh.y);

    float candidate = 0.0;
    float zone = parameters.elsewhere;
    float oval = 0.0;
    float holes = 1.0;
    float allowed = 1.0;
    if (groupReached) {
        for (int firstFace = 0; firstFace < parameters.faceCount; firstFace += MAX_SLOTS) {
            gatherFaces(firstFace, groupLow, groupHigh);
            for (int slot = 0; slot < slotCount; ++slot) {
                bool own = slotFace[slot] == parameters.face;
                float feather = faceValue(slot, 4);
                float zoneFeather = faceValue(slot, 5);
                int polygons = int(faceValue(slot, 6));
                float zoneSum = 0.0;
                float zoneWeight = 0.0;
                for (int k = 0; k < polygons; ++k) {
                    int role = int(faceValue(slot, HEADER_STRIDE + k * POLYGON_STRIDE + 2));
                    if (!own && (role == ROLE_OVAL || role == ROLE_ZONE)) {
                        continue; // another face lends only its holes
                    }
                    float cover = polygonCover(p, slot, k, feather, zoneFeather);
                    if (role == ROLE_HOLE) {
                        holes *= 1.0 - cover;
                        allowed *= 1.0 - cover;
                    } else if (role == ROLE_EXCLUSION) {
                        allowed *= 1.0 - cover;
                    } else if (role == ROLE_OVAL) {
                        oval = cover;
                    } else {
                        zoneSum += cover * faceValue(slot, HEADER_STRIDE + k * POLYGON_STRIDE + 3);
                        zoneWeight += cover;
                    }
                }
                if (own) {
                    vec2 centre = vec2(faceValue(slot, 0), faceValue(slot, 1));
                    float gradient = 1.0 - smoothstep(faceValue(slot, 2), faceValue(slot, 3), length(p - centre));
                    float person = smoothstep(parameters.personRamp.x, parameters.personRamp.y,
                                              texture(personBlurred, p / parameters.frameSize).r);
                    candidate = gradient * person;
                    zone = (zoneSum + max(0.0, 1.0 - zoneWeight) * parameters.elsewhere) / max(1.0, zoneWeight);
                }
            }
            barrier(); // the next chunk overwrites the shared lists
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
