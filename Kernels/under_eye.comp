#version 450
#extension GL_GOOGLE_include_directive : enable
// Under-eye retouch (UnderEyeStage.swift), in two passes of this kernel; every entry of the
// face table is one open eye.
//
// Measure (MEASURE = 1, one workgroup per eye): over a GRID_X x GRID_Y grid of cells covering
// the eye's trough and cheek band (plus 2 sigma), each cell's sum of L* and count of skin
// pixels (those farther than `protect` from the eye's contour: the lashes and the eye never
// darken the low band), both blurred by a Gaussian of `sigma` px in cells (normalised
// convolution: the low band of the skin alone); the trough core's mean L* (coverage 1) and the
// cheek band's, and the core's mean low band (cells weighted by their core pixels). Writes
// STATS_HEADER floats (valid, cheek L*, trough L*, their pixel counts, the core's low band)
// then the grid's low band per cell (the trough's mean where a cell has no skin near).
//
// Apply (MEASURE = 0, over the troughs' region): coverage = smoothstep(0, feather, inside the
// trough's loop) x smoothstep(protect, protect + feather, off the eye's contour) x face
// weight; the low band at the pixel (the grid, bilinear) is moved by
//   strength x coverage x (LIFT x max(cheek - trough, 0) + RELIEF x (core low - low))
// (dark circles lifted towards the cheek's level; the bag's shading relief around the core's
// own low level reduced, which leaves the core's mean where the lift put it) and that change added to the pixel's L*: a smooth change, so the
// fine band (L* minus its low band: pores, fine lines) is kept. a* and b* are kept. A pixel of
// coverage 0 is copied texel for texel; the host copied the frame to the destination before.
// With `view` set (`--debug-view under-eye`) it draws the coverage in green and the cheek
// reference in blue instead.
//
// Geometry (UnderEyeGeometry.packed, read through face_table.glsl): per eye a block of
// box x0 y0 x1 y1; feather; face weight; protect; sigma; grid origin x y; cell width height;
// then first float and count of the eye's contour, the trough's loop and the cheek band; then
// their vertices (x y pairs).
#include "beauty_common.glsl"
#include "beauty_lab.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int MEASURE = 0;

const int GRID_X = 24;
const int GRID_Y = 20;
const int CELLS = GRID_X * GRID_Y;
const int STATS_HEADER = 8;
const int STATS = STATS_HEADER + CELLS;
const int MAX_RADIUS = 8;
const float MIN_PIXELS = 16.0;   // UnderEyeGeometry.minimumPixels
const float LIFT = 0.8;
const float RELIEF = 0.5;

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

float polygonDistance(vec2 p, int slot, int which) {
    return facePolygonDistance(p, slot, int(faceValue(slot, 12 + 2 * which)), int(faceValue(slot, 13 + 2 * which)));
}

const int EYE = 0;
const int TROUGH = 1;
const int CHEEK = 2;

// ---- Measure --------------------------------------------------------------------------

// L* alone (labFromRGB's first component, without its a* and b*).
float lightness(vec3 rgb) {
    vec3 c = clamp(rgb, 0.0, 1.0);
    return 116.0 * labF(dot(vec3(0.2126729, 0.7151522, 0.0721750), vec3(labLinear(c.r), labLinear(c.g), labLinear(c.b)))) - 16.0;
}

// The box of polygon `which` of the entry in slot 0 (its vertices' bounds), grown by `margin`.
vec4 polygonBox(int which, float margin) {
    int first = int(faceValue(0, 12 + 2 * which)), count = int(faceValue(0, 13 + 2 * which));
    vec4 box = vec4(1e20, 1e20, -1e20, -1e20);
    for (int i = 0; i < count; ++i) {
        vec2 point = facePoint(0, first + 2 * i);
        box = vec4(min(box.xy, point), max(box.zw, point));
    }
    return box + vec4(-margin, -margin, margin, margin);
}

bool inBox(vec2 p, vec4 box) { return all(greaterThanEqual(p, box.xy)) && all(lessThanEqual(p, box.zw)); }

shared float cellSum[CELLS];
shared float cellCount[CELLS];
shared float blurSum[CELLS];
shared float blurCount[CELLS];
shared float cellCore[CELLS];
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

// One separable Gaussian pass over the grid's sums and counts, along its rows or its
// columns, `sigma` in cells; nothing past the grid's edge.
void blurGrid(bool alongRows, float sigma) {
    int radius = min(int(ceil(3.0 * sigma)), MAX_RADIUS);
    for (int c = int(gl_LocalInvocationIndex); c < CELLS; c += 256) {
        ivec2 cell = ivec2(c % GRID_X, c / GRID_X);
        float sum = 0.0, count = 0.0;
        for (int k = -radius; k <= radius; ++k) {
            ivec2 other = cell + (alongRows ? ivec2(k, 0) : ivec2(0, k));
            if (any(lessThan(other, ivec2(0))) || other.x >= GRID_X || other.y >= GRID_Y) {
                continue;
            }
            float g = exp(-0.5 * float(k * k) / (sigma * sigma));
            int index = other.y * GRID_X + other.x;
            sum += g * cellSum[index];
            count += g * cellCount[index];
        }
        blurSum[c] = sum;
        blurCount[c] = count;
    }
    barrier();
    for (int c = int(gl_LocalInvocationIndex); c < CELLS; c += 256) {
        cellSum[c] = blurSum[c];
        cellCount[c] = blurCount[c];
    }
    barrier();
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
    barrier();
    float feather = faceValue(0, 4), protect = faceValue(0, 6), sigma = faceValue(0, 7);
    vec2 gridOrigin = facePoint(0, 8), cellSize = facePoint(0, 10);
    ivec2 frame = textureSize(source, 0);
    // Polygon distances only near their polygons: past these boxes a pixel is far off the
    // eye, outside the trough, outside the cheek band.
    vec4 eyeBox = polygonBox(EYE, protect + feather + 1.0), troughBox = polygonBox(TROUGH, 1.0), cheekBox = polygonBox(CHEEK, 1.0);

    float troughSum = 0.0, troughCount = 0.0, cheekSum = 0.0, cheekCount = 0.0;
    for (int c = int(local); c < CELLS; c += 256) {
        ivec2 cell = ivec2(c % GRID_X, c / GRID_X);
        // Pixel centres in [edge, next edge): every pixel in one cell.
        ivec2 low = clamp(ivec2(ceil(gridOrigin + vec2(cell) * cellSize - 0.5)), ivec2(0), frame);
        ivec2 high = clamp(ivec2(ceil(gridOrigin + vec2(cell + 1) * cellSize - 0.5)), ivec2(0), frame);
        float sum = 0.0, count = 0.0, core = 0.0;
        for (int y = low.y; y < high.y; ++y) {
            for (int x = low.x; x < high.x; ++x) {
                vec2 p = vec2(x, y) + 0.5;
                float offEye = inBox(p, eyeBox) ? polygonDistance(p, 0, EYE) : 1e20;
                if (offEye <= protect) {
                    continue;
                }
                float l = lightness(texelFetch(source, ivec2(x, y), 0).rgb);
                sum += l;
                count += 1.0;
                float inTrough = inBox(p, troughBox) ? polygonDistance(p, 0, TROUGH) : 1e20;
                if (inTrough <= -feather && offEye >= protect + feather) {
                    troughSum += l;
                    troughCount += 1.0;
                    core += 1.0;
                } else if (inTrough > 0.0 && inBox(p, cheekBox) && polygonDistance(p, 0, CHEEK) < 0.0) {
                    cheekSum += l;
                    cheekCount += 1.0;
                }
            }
        }
        cellSum[c] = sum;
        cellCount[c] = count;
        cellCore[c] = core;
    }
    vec4 totals = vec4(reduceSum(troughSum), reduceSum(troughCount), reduceSum(cheekSum), reduceSum(cheekCount));
    blurGrid(true, sigma / cellSize.x);
    blurGrid(false, sigma / cellSize.y);
    float trough = totals.x / max(totals.y, 1.0), cheek = totals.z / max(totals.w, 1.0);
    int base = eye * STATS;
    float coreLow = 0.0;
    for (int c = int(local); c < CELLS; c += 256) {
        float lowBand = cellCount[c] >= 0.5 ? cellSum[c] / cellCount[c] : trough;
        stats.data[base + STATS_HEADER + c] = lowBand;
        coreLow += cellCore[c] * lowBand;
    }
    coreLow = reduceSum(coreLow) / max(totals.y, 1.0);
    if (local == 0u) {
        stats.data[base + 0] = totals.y >= MIN_PIXELS && totals.w >= MIN_PIXELS ? 1.0 : 0.0;
        stats.data[base + 1] = cheek;
        stats.data[base + 2] = trough;
        stats.data[base + 3] = totals.y;
        stats.data[base + 4] = totals.w;
        stats.data[base + 5] = coreLow;
        stats.data[base + 6] = 0.0;
        stats.data[base + 7] = 0.0;
    }
}

// ---- Apply ----------------------------------------------------------------------------

// The measured low band of eye `eye` at p, bilinear between the cells' centres.
float lowBand(int eye, vec2 gridOrigin, vec2 cellSize, vec2 p) {
    vec2 q = (p - gridOrigin) / cellSize - 0.5;
    vec2 cell = floor(q);
    vec2 f = q - cell;
    ivec2 a = clamp(ivec2(cell), ivec2(0), ivec2(GRID_X - 1, GRID_Y - 1));
    ivec2 b = clamp(ivec2(cell) + 1, ivec2(0), ivec2(GRID_X - 1, GRID_Y - 1));
    int base = eye * STATS + STATS_HEADER;
    float top = mix(stats.data[base + a.y * GRID_X + a.x], stats.data[base + a.y * GRID_X + b.x], f.x);
    float bottom = mix(stats.data[base + b.y * GRID_X + a.x], stats.data[base + b.y * GRID_X + b.x], f.x);
    return mix(top, bottom, f.y);
}

void apply() {
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = parameters.origin + offset;
    vec2 p = vec2(pixel) + 0.5;
    vec2 groupLow = vec2(parameters.origin + ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy));
    vec2 groupHigh = groupLow + vec2(gl_WorkGroupSize.xy);
    bool inRegion = all(lessThan(offset, parameters.regionSize));
    vec4 original = inRegion ? texelFetch(source, pixel, 0) : vec4(0.0);
    float coverage = 0.0, inCheek = 0.0;
    int chosen = -1;
    vec2 gridOrigin = vec2(0.0), cellSize = vec2(1.0);
    for (int firstFace = 0; firstFace < parameters.faceCount; firstFace += FACE_SLOTS) {
        gatherFaces(firstFace, groupLow, groupHigh);
        for (int slot = 0; slot < faceSlotCount; ++slot) {
            int eye = faceSlotIndex[slot];
            if (!faceBoxMeets(faceBox(eye), p, p) || stats.data[eye * STATS] == 0.0) {
                continue;
            }
            float feather = faceValue(slot, 4), protect = faceValue(slot, 6);
            float inside = smoothstep(0.0, feather, -polygonDistance(p, slot, TROUGH));
            if (inside > 0.0) {
                float c = inside * smoothstep(protect, protect + feather, polygonDistance(p, slot, EYE)) * faceValue(slot, 5);
                if (c > coverage) {
                    coverage = c;
                    chosen = eye;
                    gridOrigin = facePoint(slot, 8);
                    cellSize = facePoint(slot, 10);
                }
            } else if (parameters.view == 1 && polygonDistance(p, slot, CHEEK) < 0.0) {
                inCheek = 1.0;
            }
        }
        barrier();
    }
    if (!inRegion) {
        return;
    }
    if (parameters.view == 1) {
        vec3 shown = mix(mix(original.rgb, vec3(0.0, 1.0, 0.0), coverage), vec3(0.0, 0.0, 1.0), 0.5 * inCheek);
        imageStore(destination, pixel, vec4(shown, original.a));
        return;
    }
    float weight = coverage * parameters.strength;
    if (weight <= 0.0) {
        imageStore(destination, pixel, original);
        return;
    }
    int base = chosen * STATS;
    float cheek = stats.data[base + 1], trough = stats.data[base + 2], troughLow = stats.data[base + 5];
    float low = lowBand(chosen, gridOrigin, cellSize, p);
    vec3 lab = labFromRGB(original.rgb);
    lab.x = clamp(lab.x + weight * (LIFT * max(cheek - trough, 0.0) + RELIEF * (troughLow - low)), 0.0, 100.0);
    imageStore(destination, pixel, vec4(rgbFromLab(lab), original.a));
}

void main() {
    if (MEASURE == 1) {
        measure();
    } else {
        apply();
    }
}
