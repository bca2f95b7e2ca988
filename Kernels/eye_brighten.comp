#version 450
#extension GL_GOOGLE_include_directive : enable
// Eye brightening (EyeBrightenStage.swift), in two passes of this kernel; every entry of
// the face table is one open eye.
//
// Measure (MEASURE = 1, one workgroup per eye): the median and 90th percentile of L*
// inside the eye's contour, then the iris centre as the darkness-weighted centroid of the
// opening (weight (median - L*)^2 where darker than the median: iris and pupil); the iris's
// radius comes from the contour (EyeBrightenGeometry.irisShare of the eye's width). Writes
// STATS floats per eye.
//
// Apply (MEASURE = 0, over the eyes' region): coverage rises from 0 at the contour to 1 at
// `inset` px inside it (the lid margin and lashes, on and outside the contour, stay
// untouched). In the iris disc (soft edge) its fine detail (L* minus its 5x5 mean: crypts,
// the limbal ring's edge) is raised by IRIS_DETAIL x weight, a dark pixel going at most to
// half its L*, so the iris's contrast rises without its darks clipping; outside it, a sclera membership (smoothstep of L* between the
// median and the 90th percentile) lightens L* towards SCLERA_TARGET by SCLERA_LIFT and
// takes SCLERA_DEREDDEN of a* (red) and SCLERA_DEYELLOW of b* out. A pixel of weight 0 is
// copied texel for texel; the host copied the frame to the destination before. With `view`
// set (`--debug-view eyes`) it draws the iris weight in yellow and the sclera's in magenta
// (before the strength) over the eyes instead.
//
// Geometry (EyeBrightenGeometry.packed, read through face_table.glsl): per eye a block of
// box x0 y0 x1 y1; inset; face weight; iris radius; contour first float, count; one spare;
// then the contour's vertices (x y pairs).
#include "beauty_common.glsl"
#include "beauty_lab.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int MEASURE = 0;

const int STATS = 8;
const int BINS = 128;
const float IRIS_DETAIL = 1.0;
const int IRIS_BOX = 2;
const float SCLERA_TARGET = 92.0;
const float SCLERA_LIFT = 0.3;
const float SCLERA_DEREDDEN = 0.6;
const float SCLERA_DEYELLOW = 0.3;

layout(binding = 0) uniform sampler2D source;   // nearest
layout(binding = 1) buffer Geometry { float data[]; } geometry;
layout(binding = 2) buffer Stats { float data[]; } stats;
layout(binding = 3) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 regionSize;
    int faceCount;
    float strength;
    int view;
} parameters;

#define FACE_COUNT parameters.faceCount
#include "face_table.glsl"

// ---- Measure --------------------------------------------------------------------------

shared uint histogram[BINS];
shared float partial[256];

float reduceSum(float value) {
    uint local = gl_LocalInvocationIndex;
    partial[local] = value;
    barrier();
    for (uint stride = 128; stride > 0; stride >>= 1) {
        if (local < stride) {
            partial[local] += partial[local + stride];
        }
        barrier();
    }
    float total = partial[0];
    barrier();
    return total;
}

int lightnessBin(float lightness) { return clamp(int(lightness * float(BINS) / 100.0), 0, BINS - 1); }

float quantile(float q) {
    uint total = 0u;
    for (int bin = 0; bin < BINS; ++bin) {
        total += histogram[bin];
    }
    uint needed = max(uint(ceil(q * float(total))), 1u);
    uint running = 0u;
    for (int bin = 0; bin < BINS; ++bin) {
        running += histogram[bin];
        if (running >= needed) {
            return (float(bin) + 0.5) * 100.0 / float(BINS);
        }
    }
    return 100.0;
}

void measure() {
    int eye = int(gl_WorkGroupID.x);
    uint local = gl_LocalInvocationIndex;
    int entry = eye * FACE_DIRECTORY_STRIDE;
    int start = int(geometry.data[entry]);
    int length = int(geometry.data[entry + 1]);
    if (local == 0u) {
        faceSlotIndex[0] = eye;
        faceSlotBase[0] = length <= FACE_TABLE_FLOATS ? 0 : -1;
        faceSlotCount = 1;
    }
    for (int i = int(local); i < min(length, FACE_TABLE_FLOATS); i += 256) {
        faceTable[i] = geometry.data[start + i];
    }
    if (local < BINS) {
        histogram[local] = 0u;
    }
    barrier();
    ivec2 low = ivec2(floor(facePoint(0, 0))), high = ivec2(ceil(facePoint(0, 2)));
    ivec2 size = max(high - low, ivec2(0));
    int first = int(faceValue(0, 7)), count = int(faceValue(0, 8));
    int pixels = size.x * size.y;

    float inside = 0.0;
    for (int i = int(local); i < pixels; i += 256) {
        ivec2 pixel = low + ivec2(i % size.x, i / size.x);
        if (facePolygonDistance(vec2(pixel) + 0.5, 0, first, count) < 0.0) {
            inside += 1.0;
            atomicAdd(histogram[lightnessBin(labFromRGB(texelFetch(source, pixel, 0).rgb).x)], 1u);
        }
    }
    float total = reduceSum(inside);
    float median = quantile(0.5), light = quantile(0.9);

    vec3 weighted = vec3(0.0);
    for (int i = int(local); i < pixels; i += 256) {
        ivec2 pixel = low + ivec2(i % size.x, i / size.x);
        vec2 p = vec2(pixel) + 0.5;
        if (facePolygonDistance(p, 0, first, count) < 0.0) {
            float dark = max(median - labFromRGB(texelFetch(source, pixel, 0).rgb).x, 0.0);
            weighted += vec3(p, 1.0) * dark * dark;
        }
    }
    vec3 sums = vec3(reduceSum(weighted.x), reduceSum(weighted.y), reduceSum(weighted.z));
    vec2 centre = sums.z > 0.0 ? sums.xy / sums.z : 0.5 * (facePoint(0, 0) + facePoint(0, 2));

    if (local == 0u) {
        int base = eye * STATS;
        stats.data[base + 0] = total >= 16.0 && light > median ? 1.0 : 0.0;
        stats.data[base + 1] = median;
        stats.data[base + 2] = light;
        stats.data[base + 3] = centre.x;
        stats.data[base + 4] = centre.y;
        stats.data[base + 5] = 0.0;
        stats.data[base + 6] = 0.0;
        stats.data[base + 7] = 0.0;
    }
}

// ---- Apply ----------------------------------------------------------------------------

void apply() {
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = parameters.origin + offset;
    vec2 p = vec2(pixel) + 0.5;
    vec2 groupLow = vec2(parameters.origin + ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy));
    vec2 groupHigh = groupLow + vec2(gl_WorkGroupSize.xy);
    bool inRegion = all(lessThan(offset, parameters.regionSize));
    vec4 original = inRegion ? texelFetch(source, pixel, 0) : vec4(0.0);
    float coverage = 0.0, irisRadius = 0.0;
    int chosen = -1;
    for (int firstFace = 0; firstFace < parameters.faceCount; firstFace += FACE_SLOTS) {
        gatherFaces(firstFace, groupLow, groupHigh);
        for (int slot = 0; slot < faceSlotCount; ++slot) {
            int eye = faceSlotIndex[slot];
            if (!faceBoxMeets(faceBox(eye), p, p) || stats.data[eye * STATS] == 0.0) {
                continue;
            }
            float d = facePolygonDistance(p, slot, int(faceValue(slot, 7)), int(faceValue(slot, 8)));
            float c = smoothstep(0.0, faceValue(slot, 4), -d) * faceValue(slot, 5);
            if (c > coverage) {
                coverage = c;
                chosen = eye;
                irisRadius = faceValue(slot, 6);
            }
        }
        barrier();
    }
    if (!inRegion) {
        return;
    }
    float weight = coverage * (parameters.view == 1 ? 1.0 : parameters.strength);
    if (weight <= 0.0) {
        imageStore(destination, pixel, original);
        return;
    }
    int base = chosen * STATS;
    float median = stats.data[base + 1], light = stats.data[base + 2];
    float inIris = 1.0 - smoothstep(0.85 * irisRadius, irisRadius, distance(p, vec2(stats.data[base + 3], stats.data[base + 4])));
    vec3 colour = original.rgb;
    vec3 lab = labFromRGB(colour);
    float iris = weight * inIris;
    if (iris > 0.0) {
        float sum = 0.0;
        ivec2 last = textureSize(source, 0) - 1;
        for (int dy = -IRIS_BOX; dy <= IRIS_BOX; ++dy) {
            for (int dx = -IRIS_BOX; dx <= IRIS_BOX; ++dx) {
                sum += labFromRGB(texelFetch(source, clamp(pixel + ivec2(dx, dy), ivec2(0), last), 0).rgb).x;
            }
        }
        float detail = lab.x - sum / float((2 * IRIS_BOX + 1) * (2 * IRIS_BOX + 1));
        // Darks deepen at most to half their lightness: the pupil and lash shadows never clip to black.
        lab.x = clamp(lab.x + IRIS_DETAIL * iris * detail, 0.5 * lab.x, 100.0);
    }
    float sclera = weight * (1.0 - inIris) * smoothstep(median, light, lab.x);
    if (parameters.view == 1) {
        vec3 shown = mix(mix(original.rgb, vec3(1.0, 1.0, 0.0), iris), vec3(1.0, 0.0, 1.0), sclera);
        imageStore(destination, pixel, vec4(shown, original.a));
        return;
    }
    if (iris > 0.0 || sclera > 0.0) {
        lab.x += sclera * SCLERA_LIFT * max(SCLERA_TARGET - lab.x, 0.0);
        lab.y -= sclera * SCLERA_DEREDDEN * max(lab.y, 0.0);
        lab.z -= sclera * SCLERA_DEYELLOW * max(lab.z, 0.0);
        colour = rgbFromLab(lab);
    }
    imageStore(destination, pixel, vec4(colour, original.a));
}

void main() {
    if (MEASURE == 1) {
        measure();
    } else {
        apply();
    }
}
