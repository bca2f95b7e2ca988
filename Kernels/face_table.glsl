// Access to a table of faces of any length (SkinMaskGeometry, MakeupGeometry and
// ReshapeField pack theirs so). The buffer starts with a directory of
// FACE_DIRECTORY_STRIDE floats per face: block start, block length, two spare, and the
// frame box the face can touch (x0 y0 x1 y1); each face's block follows, with offsets
// inside a block relative to its start. The including kernel declares the table, and a
// push-constant `faceCount` reached through FACE_COUNT, before including this.
//
// Two ways to reach a face, both through faceValue(slot, offset):
// - FACE_TABLE_DIRECT defined: a slot is the face's index and its block is read from the
//   table, declared twice, as RGBA32F texels and as a storage buffer:
//     layout(binding = N, rgba32f) readonly uniform imageBuffer geometryTexels;
//     layout(binding = M) readonly buffer GeometryWords { float data[]; } geometryWords;
//   For the per-pixel kernels: a loop over the faces whose box meets the workgroup's reads
//   the same address in every lane, and it needs no barrier (shared memory and barriers
//   made the mask, blend, makeup and reshape kernels about 5x slower on lavapipe: reshape
//   318 -> 64 ms a 720p frame). FACE_TABLE_TEXELS (a specialisation constant, `FaceTable`)
//   picks the reads: texels on CPU devices, where lavapipe loads a storage buffer one lane
//   and one float at a time in a loop with a branch per lane and fetches a texel in one
//   gather (the blend 51 -> 30 ms a 720p frame on a 2-core EPYC); the storage buffer on
//   GPUs, where one address read by every lane is one broadcast load (texels cost the H200
//   4.5 % more GPU time in the skin stages).
// - otherwise: the table is a storage buffer,
//     layout(binding = N) buffer Geometry { float data[]; } geometry;
//   and a workgroup lists the faces whose box meets its own, up to FACE_SLOTS at a
//   time, with gatherFaces, and copies their blocks to shared memory while they fit;
//   for kernels that hold barriers anyway (the retouch stages' reductions).

const int FACE_DIRECTORY_STRIDE = 8;

#ifdef FACE_TABLE_DIRECT
layout(constant_id = 16) const int FACE_TABLE_TEXELS = 1;

float faceTableRead(int index) {
    return FACE_TABLE_TEXELS != 0 ? imageLoad(geometryTexels, index >> 2)[index & 3] : geometryWords.data[index];
}
#else
float faceTableRead(int index) {
    return geometry.data[index];
}
#endif

// The frame box face `face` can touch.
vec4 faceBox(int face) {
    int entry = face * FACE_DIRECTORY_STRIDE;
    return vec4(faceTableRead(entry + 4), faceTableRead(entry + 5), faceTableRead(entry + 6), faceTableRead(entry + 7));
}

bool faceBoxMeets(vec4 box, vec2 low, vec2 high) {
    return !(box.z < low.x || box.w < low.y || box.x > high.x || box.y > high.y);
}

// A float of face `face`'s block read from the buffer, in either mode (a kernel that
// gathers for one pass may read directly in another).
float faceBlockValue(int face, int offset) {
    return faceTableRead(int(faceTableRead(face * FACE_DIRECTORY_STRIDE)) + offset);
}

vec2 faceBlockPoint(int face, int offset) {
    return vec2(faceBlockValue(face, offset), faceBlockValue(face, offset + 1));
}

#ifdef FACE_TABLE_DIRECT

float faceValue(int slot, int offset) {
    return faceBlockValue(slot, offset);
}

#else

const int FACE_TABLE_FLOATS = 4096;
const int FACE_SLOTS = 64;

shared float faceTable[FACE_TABLE_FLOATS];
shared int faceSlotIndex[FACE_SLOTS];
shared int faceSlotBase[FACE_SLOTS];   // block start in faceTable, or -1: read from the buffer
shared int faceSlotCount;

// A float of the face in `slot`, at `offset` within its block.
float faceValue(int slot, int offset) {
    int base = faceSlotBase[slot];
    if (base >= 0) {
        return faceTable[base + offset];
    }
    return faceTableRead(int(faceTableRead(faceSlotIndex[slot] * FACE_DIRECTORY_STRIDE)) + offset);
}

// Lists, from face `firstFace` on, up to FACE_SLOTS faces whose box meets the frame box
// (low, high), and copies their blocks. Call from every invocation of the workgroup (it
// holds barriers), with uniform arguments; call `barrier()` before calling it again.
void gatherFaces(int firstFace, vec2 low, vec2 high) {
    if (gl_LocalInvocationIndex == 0) {
        int count = 0;
        int used = 0;
        for (int face = firstFace; face < FACE_COUNT && count < FACE_SLOTS; ++face) {
            if (!faceBoxMeets(faceBox(face), low, high)) {
                continue;
            }
            int length = int(faceTableRead(face * FACE_DIRECTORY_STRIDE + 1));
            bool fits = used + length <= FACE_TABLE_FLOATS;
            faceSlotIndex[count] = face;
            faceSlotBase[count] = fits ? used : -1;
            used += fits ? length : 0;
            count += 1;
        }
        faceSlotCount = count;
    }
    barrier();
    uint invocations = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    for (int slot = 0; slot < faceSlotCount; ++slot) {
        int base = faceSlotBase[slot];
        if (base < 0) {
            continue;
        }
        int entry = faceSlotIndex[slot] * FACE_DIRECTORY_STRIDE;
        int start = int(faceTableRead(entry));
        int length = int(faceTableRead(entry + 1));
        for (int i = int(gl_LocalInvocationIndex); i < length; i += int(invocations)) {
            faceTable[base + i] = faceTableRead(start + i);
        }
    }
    barrier();
}

#endif

vec2 facePoint(int slot, int offset) {
    return vec2(faceValue(slot, offset), faceValue(slot, offset + 1));
}

// A point of the face in `slot` (direct false) or of face `face`'s block in the buffer.
vec2 faceTablePoint(bool direct, int index, int offset) {
    return direct ? faceBlockPoint(index, offset) : facePoint(index, offset);
}

// Signed distance from p to a closed polygon (negative inside), even-odd rule; `first` is
// the offset of its first vertex (x y pairs) in the block; `index` a slot or, with
// `direct`, a face.
float faceTablePolygonDistance(vec2 p, bool direct, int index, int first, int count) {
    float nearest = 1e20;
    bool inside = false;
    vec2 a = faceTablePoint(direct, index, first + 2 * (count - 1));
    for (int i = 0; i < count; ++i) {
        vec2 b = faceTablePoint(direct, index, first + 2 * i);
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

// The polygon distance for the face in `slot`.
float facePolygonDistance(vec2 p, int slot, int first, int count) {
    return faceTablePolygonDistance(p, false, slot, first, count);
}

// The polygon distance for face `face`'s block, read from the buffer in either mode.
float faceBlockPolygonDistance(vec2 p, int face, int first, int count) {
    return faceTablePolygonDistance(p, true, face, first, count);
}
