#version 450
#extension GL_GOOGLE_include_directive : enable
// Teeth whitening (TeethStage.swift), in two passes of this kernel.
//
// Measure (MEASURE = 1, one workgroup per face): inside the mouth opening (the inner lip
// loop) every pixel gets a score s = L* - a* (teeth are light and hardly red; tongue, gums
// and lips are red, the mouth's inside dark). Otsu's threshold on the histogram of s (the
// centre of its plateau of near-best splits) splits this mouth's own pixels in two
// classes; the upper one is the teeth when its mean a* is below the other class's (less red
// than the tongue, gums and lips around them). Then the cap:
// the sclera's lightness, the 98th percentile of L* inside the open eyes' contours (the lit
// white; the iris, pupil and lash shadow are the dark rest; without an open eye, the teeth's
// own 95th percentile).
// Writes STATS floats per face.
//
// Apply (MEASURE = 0, over the mouth region): weight m = opening coverage (inner loop,
// feathered over +-feather px) x teeth membership (smoothstep of s around the threshold,
// at least 3 sigma of the score's measured noise each side)
// x face weight x strength; L* rises by m x LIFT x (cap - L*) where below the cap (never
// past it; teeth already lighter than the sclera keep their L*), b* (yellow) falls by
// m x 0.7 x b*. A pixel with m = 0 is copied texel for
// texel; the host copied the frame to the destination before. With `view` set
// (`--debug-view teeth`) it draws the weight (before the strength) in cyan over the
// mouth instead.
//
// Geometry (TeethGeometry.packed, read through face_table.glsl): per face a block of mouth
// box x0 y0 x1 y1; feather; face weight; inner loop first float, count; right eye loop
// first, count; left eye first, count (0 for a closed eye); eye box x0 y0 x1 y1; two
// spare; then the loop vertices (x y pairs).
#include "beauty_common.glsl"
#include "beauty_lab.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int MEASURE = 0;

const int STATS = 8;
const int SCORE_BINS = 128;
const float SCORE_LOW = -40.0;
const float SCORE_STEP = 1.5;
const float YELLOW_REMOVED = 0.7;
const float SCLERA_QUANTILE = 0.98;
const float LIFT = 0.5;
const float TEETH_CAP_QUANTILE = 0.95;
const float OTSU_PLATEAU = 0.9;

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

float score(vec3 lab) { return lab.x - lab.y; }

// ---- Measure --------------------------------------------------------------------------

shared uint histogram[SCORE_BINS];
shared float partial[256];
shared float threshold;

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

void clearHistogram() {
    if (gl_LocalInvocationIndex < SCORE_BINS) {
        histogram[gl_LocalInvocationIndex] = 0u;
    }
    barrier();
}

// The lowest bin where the cumulative count reaches `quantile` of the histogram's total.
int quantileBin(float quantile) {
    uint total = 0u;
    for (int bin = 0; bin < SCORE_BINS; ++bin) {
        total += histogram[bin];
    }
    uint needed = uint(ceil(quantile * float(total)));
    uint running = 0u;
    for (int bin = 0; bin < SCORE_BINS; ++bin) {
        running += histogram[bin];
        if (running >= max(needed, 1u)) {
            return bin;
        }
    }
    return SCORE_BINS - 1;
}

// Lightness histogram bins: 0...100 in steps of 100 / SCORE_BINS.
int lightnessBin(float lightness) { return clamp(int(lightness * float(SCORE_BINS) / 100.0), 0, SCORE_BINS - 1); }
float lightnessOfBin(int bin) { return (float(bin) + 0.5) * 100.0 / float(SCORE_BINS); }

// Otsu's threshold (in score units) over the score histogram: the split that maximises the
// between-class variance; -1e20 when every pixel falls in one bin.
float otsuThreshold() {
    float total = 0.0, sum = 0.0;
    for (int bin = 0; bin < SCORE_BINS; ++bin) {
        total += float(histogram[bin]);
        sum += float(bin) * float(histogram[bin]);
    }
    // Two sweeps: the best between-class variance, then the centre of the splits within
    // OTSU_PLATEAU of it. A mouth's score histogram is often flat between its classes, and the
    // single best split there jumps with each frame's noise; the plateau's centre does not.
    float best = -1.0;
    for (int sweep = 0; sweep < 2; ++sweep) {
        float lowCount = 0.0, lowSum = 0.0, splitSum = 0.0, splitWeight = 0.0;
        for (int bin = 0; bin < SCORE_BINS - 1; ++bin) {
            lowCount += float(histogram[bin]);
            lowSum += float(bin) * float(histogram[bin]);
            float highCount = total - lowCount;
            if (lowCount == 0.0 || highCount == 0.0) {
                continue;
            }
            float difference = lowSum / lowCount - (sum - lowSum) / highCount;
            float between = lowCount * highCount * difference * difference;
            if (sweep == 0) {
                best = max(best, between);
            } else if (between >= OTSU_PLATEAU * best) {
                splitSum += float(bin) * between;
                splitWeight += between;
            }
        }
        if (sweep == 1) {
            return splitWeight <= 0.0 ? -1e20 : SCORE_LOW + (splitSum / splitWeight + 1.0) * SCORE_STEP;
        }
    }
    return -1e20;
}

void measure() {
    int face = int(gl_WorkGroupID.x);
    uint local = gl_LocalInvocationIndex;
    int entry = face * FACE_DIRECTORY_STRIDE;
    int start = int(geometry.data[entry]);
    int length = int(geometry.data[entry + 1]);
    // The face's block into slot 0 of the shared table (facePolygonDistance reads it there).
    if (local == 0u) {
        faceSlotIndex[0] = face;
        faceSlotBase[0] = length <= FACE_TABLE_FLOATS ? 0 : -1;
        faceSlotCount = 1;
    }
    for (int i = int(local); i < min(length, FACE_TABLE_FLOATS); i += 256) {
        faceTable[i] = geometry.data[start + i];
    }
    clearHistogram();
    ivec2 low = ivec2(floor(facePoint(0, 0))), high = ivec2(ceil(facePoint(0, 2)));
    ivec2 size = max(high - low, ivec2(0));
    int innerFirst = int(faceValue(0, 6)), innerCount = int(faceValue(0, 7));
    int pixels = size.x * size.y;

    for (int i = int(local); i < pixels; i += 256) {
        ivec2 pixel = low + ivec2(i % size.x, i / size.x);
        if (facePolygonDistance(vec2(pixel) + 0.5, 0, innerFirst, innerCount) < 0.0) {
            float s = score(labFromRGB(texelFetch(source, pixel, 0).rgb));
            atomicAdd(histogram[clamp(int((s - SCORE_LOW) / SCORE_STEP), 0, SCORE_BINS - 1)], 1u);
        }
    }
    barrier();
    if (local == 0u) {
        threshold = otsuThreshold();
    }
    barrier();
    float split = threshold;
    clearHistogram();

    // The upper class: its count, mean L* a* b* and its lightness histogram.
    vec4 sums = vec4(0.0);
    float opening = 0.0, restRedness = 0.0, stepSum = 0.0;
    for (int i = int(local); i < pixels; i += 256) {
        ivec2 pixel = low + ivec2(i % size.x, i / size.x);
        if (facePolygonDistance(vec2(pixel) + 0.5, 0, innerFirst, innerCount) < 0.0) {
            opening += 1.0;
            vec3 lab = labFromRGB(texelFetch(source, pixel, 0).rgb);
            if (score(lab) >= split) {
                sums += vec4(1.0, lab);
                stepSum += abs(score(lab) - score(labFromRGB(texelFetch(source, min(pixel + ivec2(1, 0), textureSize(source, 0) - 1), 0).rgb)));
                atomicAdd(histogram[lightnessBin(lab.x)], 1u);
            } else {
                restRedness += lab.y;
            }
        }
    }
    float count = reduceSum(sums.x);
    vec3 mean = vec3(reduceSum(sums.y), reduceSum(sums.z), reduceSum(sums.w)) / max(count, 1.0);
    float openingPixels = reduceSum(opening);
    float restMeanRedness = reduceSum(restRedness) / max(openingPixels - count, 1.0);
    // The score's own noise (sigma from the mean step between neighbours, E|d| = 2 sigma / sqrt(pi)
    // for d ~ N(0, 2 sigma^2)); the membership ramp spans 3 of it each side so that a frame's
    // noise moves a pixel's weight little.
    float scoreNoise = reduceSum(stepSum) / max(count, 1.0) * 0.886;
    barrier();
    float teethCap = lightnessOfBin(quantileBin(TEETH_CAP_QUANTILE));
    barrier();
    clearHistogram();

    // The sclera: the light end of the open eyes' pixels.
    ivec2 eyeLow = ivec2(floor(facePoint(0, 12))), eyeHigh = ivec2(ceil(facePoint(0, 14)));
    ivec2 eyeSize = max(eyeHigh - eyeLow, ivec2(0));
    float eyePixels = 0.0;
    for (int i = int(local); i < eyeSize.x * eyeSize.y; i += 256) {
        ivec2 pixel = eyeLow + ivec2(i % eyeSize.x, i / eyeSize.x);
        vec2 p = vec2(pixel) + 0.5;
        bool inside = false;
        for (int eye = 0; eye < 2; ++eye) {
            int eyeCount = int(faceValue(0, 9 + 2 * eye));
            inside = inside || (eyeCount > 0 && facePolygonDistance(p, 0, int(faceValue(0, 8 + 2 * eye)), eyeCount) < 0.0);
        }
        if (inside) {
            eyePixels += 1.0;
            atomicAdd(histogram[lightnessBin(labFromRGB(texelFetch(source, pixel, 0).rgb).x)], 1u);
        }
    }
    float eyeTotal = reduceSum(eyePixels);
    barrier();
    if (local == 0u) {
        float cap = eyeTotal >= 16.0 ? lightnessOfBin(quantileBin(SCLERA_QUANTILE)) : teethCap;
        // Teeth: a class of its own (not the whole opening, not a few pixels), less red than
        // the rest of the mouth (a light tongue above a dark inside is redder than it).
        bool valid = split > -1e19 && count >= max(8.0, 0.02 * openingPixels) && count < openingPixels
            && mean.y < restMeanRedness;
        int base = face * STATS;
        stats.data[base + 0] = valid ? 1.0 : 0.0;
        stats.data[base + 1] = split;
        // The soft edge of the class: half the way from the threshold to its mean score (a wide
        // edge, so a threshold that moves with a frame's noise moves the weight less).
        stats.data[base + 2] = max(max(3.0 * SCORE_STEP, 3.0 * scoreNoise), 0.5 * (mean.x - mean.y - split));
        stats.data[base + 3] = mean.x;
        stats.data[base + 4] = cap;
        stats.data[base + 5] = mean.y;
        stats.data[base + 6] = mean.z;
        stats.data[base + 7] = count;
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
    vec3 lab = labFromRGB(original.rgb);
    float s = score(lab);
    float weight = 0.0;
    int chosen = -1;
    for (int firstFace = 0; firstFace < parameters.faceCount; firstFace += FACE_SLOTS) {
        gatherFaces(firstFace, groupLow, groupHigh);
        for (int slot = 0; slot < faceSlotCount; ++slot) {
            int face = faceSlotIndex[slot];
            if (!faceBoxMeets(faceBox(face), p, p) || stats.data[face * STATS] == 0.0) {
                continue;
            }
            float feather = faceValue(slot, 4);
            float d = facePolygonDistance(p, slot, int(faceValue(slot, 6)), int(faceValue(slot, 7)));
            if (d >= feather) {
                continue;
            }
            float split = stats.data[face * STATS + 1], edge = stats.data[face * STATS + 2];
            float m = (1.0 - smoothstep(-feather, feather, d)) * smoothstep(split - edge, split + edge, s) * faceValue(slot, 5);
            if (m > weight) {
                weight = m;
                chosen = face;
            }
        }
        barrier();
    }
    if (!inRegion) {
        return;
    }
    if (parameters.view == 1) {
        imageStore(destination, pixel, vec4(mix(original.rgb, vec3(0.0, 1.0, 1.0), weight), original.a));
        return;
    }
    float m = weight * parameters.strength;
    if (m <= 0.0) {
        imageStore(destination, pixel, original);
        return;
    }
    float cap = stats.data[chosen * STATS + 4];
    vec3 whitened = lab;
    whitened.x = lab.x + m * LIFT * max(cap - lab.x, 0.0);
    whitened.z = lab.z - m * YELLOW_REMOVED * max(lab.z, 0.0);
    imageStore(destination, pixel, vec4(rgbFromLab(whitened), original.a));
}

void main() {
    if (MEASURE == 1) {
        measure();
    } else {
        apply();
    }
}
