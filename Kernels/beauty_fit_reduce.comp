#version 450
#extension GL_GOOGLE_include_directive : enable
// Strength fit, step 3: one workgroup per face sums the metric bands over its discs from
// the atlas (r, g, b) and its two blurs. The band of a value v is mid = Gf(v) - Gm(v)
// (blotches) and fine = v - Gf(v) (pores), as quality metrics M5 and M6 define them.
//
// Fit (MEASURE = 0): with a = mid(Y' spot-fixed) and d = mid(m x (Y' smoothed - Y'
// spot-fixed)), the output's mid band at gain g is a + g d (the blend is linear in the
// weight while g m stays below 1), so its energy E(g) = A + 2 g B + g^2 C. The gain is the
// smallest g with E(g) = target x E_in (E_in: the input's mid-band energy), or the g that
// comes closest, capped where g m would reach 1 in a disc. Writes per face: gain, the
// predicted M5 and M6, E_in.
//
// Measure (MEASURE = 1): the mid- and fine-band energies of the input (r) and the output
// (g), and each cheek disc's mean CIELAB colour in and out (read from the images; the host
// takes CIEDE2000 of them for M8). Writes per face 20 floats (see StrengthFit.swift).
#include "beauty_common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const int MEASURE = 0;

layout(binding = 0) uniform sampler2D base;    // nearest: the sampled atlas
layout(binding = 1) uniform sampler2D fine;    // nearest: its fine blur
layout(binding = 2) uniform sampler2D middle;  // nearest: its middle blur
layout(binding = 3) uniform sampler2D imageA;  // linear: the input (MEASURE)
layout(binding = 4) uniform sampler2D imageB;  // linear: the output (MEASURE)
layout(binding = 5, rgba32f) readonly uniform imageBuffer paramTexels;
layout(binding = 6) buffer Results { float data[]; } results;

layout(push_constant) uniform Parameters {
    vec2 frameSize;
    int faceCount;
} parameters;

#include "beauty_fit_common.glsl"

const int VALUES = 18;
// Every sum and the largest weight reduced together, one tree level for all of them between
// two barriers (a tree per value took 10 barriers each, 189 in all: on a GPU the one
// workgroup's latency, on lavapipe a switch of all 256 invocations per barrier). Each value
// adds the same pairs in the same order as before, so the sums are the same to the bit.
const int REDUCED = VALUES + 1;
shared float partial[REDUCED][256];

float linearOf(float c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }
float labF(float t) { return t > 216.0 / 24389.0 ? pow(t, 1.0 / 3.0) : (24389.0 / 27.0 * t + 16.0) / 116.0; }

// CIELAB (D65) of a non-linear sRGB colour, as ColourDifference.lab(fromSRGB:).
vec3 labOf(vec3 rgb) {
    vec3 c = clamp(rgb, 0.0, 1.0);
    vec3 l = vec3(linearOf(c.r), linearOf(c.g), linearOf(c.b));
    float x = 0.4124564 * l.r + 0.3575761 * l.g + 0.1804375 * l.b;
    float y = 0.2126729 * l.r + 0.7151522 * l.g + 0.0721750 * l.b;
    float z = 0.0193339 * l.r + 0.1191920 * l.g + 0.9503041 * l.b;
    float fx = labF(x / 0.95047), fy = labF(y), fz = labF(z / 1.08883);
    return vec3(116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz));
}

void main() {
    int face = int(gl_WorkGroupID.x);
    if (face >= parameters.faceCount) {
        return;
    }
    float sums[VALUES];
    for (int v = 0; v < VALUES; ++v) {
        sums[v] = 0.0;
    }
    float largestWeight = 0.0;
    int samples = fitSamples(face);
    int perPatch = samples * samples;
    for (int index = int(gl_LocalInvocationIndex); index < FIT_DISCS * perPatch; index += 256) {
        int disc = index / perPatch;
        ivec2 ij = ivec2((index % perPatch) % samples, (index % perPatch) / samples);
        ivec2 cell = ivec2(disc * FIT_PATCH, face * FIT_PATCH) + ij;
        vec4 value = texelFetch(base, cell, 0);
        if (value.a < 0.0) {
            continue; // outside the disc or the frame
        }
        vec3 fineBlur = texelFetch(fine, cell, 0).rgb;
        vec3 mid = fineBlur - texelFetch(middle, cell, 0).rgb;
        vec3 grain = value.rgb - fineBlur;
        if (MEASURE == 0) {
            sums[0] += mid.r * mid.r;
            sums[1] += mid.g * mid.g;
            sums[2] += mid.g * mid.b;
            sums[3] += mid.b * mid.b;
            sums[4] += grain.r * grain.r;
            sums[5] += grain.g * grain.g;
            sums[6] += grain.g * grain.b;
            sums[7] += grain.b * grain.b;
            largestWeight = max(largestWeight, value.a);
        } else {
            sums[0] += mid.r * mid.r;
            sums[1] += mid.g * mid.g;
            sums[2] += grain.r * grain.r;
            sums[3] += grain.g * grain.g;
            if (disc < 2) {
                vec2 uv = fitSamplePosition(face, disc, ij) / parameters.frameSize;
                int at = 4 + 7 * disc;
                sums[at + 0] += 1.0;
                vec3 labIn = labOf(texture(imageA, uv).rgb);
                vec3 labOut = labOf(texture(imageB, uv).rgb);
                sums[at + 1] += labIn.x; sums[at + 2] += labIn.y; sums[at + 3] += labIn.z;
                sums[at + 4] += labOut.x; sums[at + 5] += labOut.y; sums[at + 6] += labOut.z;
            }
        }
    }
    uint local = gl_LocalInvocationIndex;
    for (int v = 0; v < VALUES; ++v) {
        partial[v][local] = sums[v];
    }
    partial[VALUES][local] = largestWeight;
    barrier();
    for (uint stride = 128; stride > 0; stride >>= 1) {
        if (local < stride) {
            for (int v = 0; v < VALUES; ++v) {
                partial[v][local] += partial[v][local + stride];
            }
            partial[VALUES][local] = max(partial[VALUES][local], partial[VALUES][local + stride]);
        }
        barrier();
    }
    for (int v = 0; v < VALUES; ++v) {
        sums[v] = partial[v][0];
    }
    largestWeight = partial[VALUES][0];
    if (gl_LocalInvocationIndex != 0) {
        return;
    }
    if (MEASURE != 0) {
        int out0 = face * 20;
        results.data[out0 + 0] = sums[0];
        results.data[out0 + 1] = sums[1];
        results.data[out0 + 2] = sums[2];
        results.data[out0 + 3] = sums[3];
        for (int disc = 0; disc < 2; ++disc) {
            int at = 4 + 7 * disc;
            float count = max(sums[at], 1.0);
            for (int c = 0; c < 6; ++c) {
                results.data[out0 + 4 + 6 * disc + c] = sums[at + 1 + c] / count;
            }
        }
        results.data[out0 + 16] = sums[4];
        results.data[out0 + 17] = sums[11];
        return;
    }
    float energyIn = sums[0], a = sums[1], b = sums[2], c = sums[3];
    float goal = fitTarget(face) * energyIn;
    float maxGain = largestWeight > 0.0 ? min(fitMaxGain(face), 1.0 / largestWeight) : 0.0;
    float gain = 0.0;
    if (energyIn > 0.0 && c > 0.0 && a > goal) {
        float discriminant = b * b - c * (a - goal);
        gain = discriminant >= 0.0 ? (-b - sqrt(discriminant)) / c : -b / c;
    }
    gain = clamp(gain, 0.0, maxGain);
    int out0 = face * 8;
    results.data[out0 + 0] = gain;
    results.data[out0 + 1] = energyIn > 0.0 ? (a + 2.0 * gain * b + gain * gain * c) / energyIn : 1.0;
    results.data[out0 + 2] = sums[4] > 0.0 ? (sums[5] + 2.0 * gain * sums[6] + gain * gain * sums[7]) / sums[4] : 1.0;
    results.data[out0 + 3] = energyIn;
}
