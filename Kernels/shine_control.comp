#version 450
#extension GL_GOOGLE_include_directive : enable
// Shine control (ShineStage.swift), in two passes of this kernel; every entry of the face
// table is one region of one face (forehead, nose, right cheek, left cheek).
//
// Measure (MEASURE = 1, one workgroup per region): over the region's box, cut in a grid
// of cells (ShineGeometry.cellShare of the IOD), in each cell whose centre lies within the
// feather of the region's polygon every skin pixel (outside the eye, brow, lip and nostril
// holes' outlines) is counted into its cell's mean L* and C*: the low band, on a grid, that
// the apply pass interpolates. The skin of the cells wholly inside the polygon also fills
// histograms of L* and chroma C*, from which
// this region's own skin level (the median L*), its diffuse spread (p50 - p25: the lower
// half, which a highlight, a positive excess, never reaches) and its skin chroma (median
// C*) are read, and its skin's hue (the direction of its mean a*, b*). A cell with no skin
// pixel takes the level. Writes STATS_HEADER floats and the grid per region.
//
// Apply (MEASURE = 0, over the regions' boxes): each region the pixel lies in gives its low
// band, L* and C* (bilinear over its grids' cell centres), and its excess over its threshold,
// level + TAU_SPREADS x spread, through a soft hinge (knee +-TAU_KNEE x the margin), times
// its whiteness (how far the low band's C* / (L* + 16) falls below the region's skin's:
// diffuse light scales both alike, a specular highlight adds white): the pull, PULL x that.
// The region weight c = polygon coverage (feathered over +-feather px) x the holes (solid
// up to the grown outline, fading over 2 x holeFeather beyond, as the skin mask's) x face
// weight. L* falls by strength x the largest c x pull over the regions (continuous where
// two meet): a function of the low band only, so the fine band (pores, grain) is kept; the
// chroma the highlight washed out returns by the share of the excess removed, as an offset
// along the region's skin hue (the pixel's own chroma scaled instead would grow its chroma
// noise by the same factor: the stage flickered 1.035x its input on a noisy still clip). A pixel with
// no excess, or of weight 0, is copied texel for texel (the host copied the frame to the
// destination before). With `view` set (`--debug-view shine`) it draws the region weight in
// blue and the highlight found (the pull's share of PULL x the margin) in red over it,
// before the strength.
//
// Geometry (ShineGeometry.packed, read through face_table.glsl): per region a block of
// box x0 y0 x1 y1 (also the grid's extent); feather; hole feather; face weight; cell size;
// grid columns, rows; polygon first float, count; hole count; one spare; then per hole
// first float, count and its outline's box x0 y0 x1 y1; then the vertices (x y pairs).
#include "beauty_common.glsl"
#include "beauty_lab.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int MEASURE = 0;

const int STATS_HEADER = 8;
const int GRID_CELLS = 2304;          // ShineGeometry.maxCells
const int CELLS_PER_LANE = GRID_CELLS / 256;
const int HEADER = 14;
const int HOLE_STRIDE = 6;
const int LIGHTNESS_BINS = 128;
const int CHROMA_BINS = 64;           // C* 0...64, one per bin
const float PULL = 0.8;
const float TAU_SPREADS = 0.5;
const float SPECULAR_LOW = 0.0;
const float SPECULAR_HIGH = 0.2;
const float MAX_CHROMA_GAIN = 2.0;
const float TAU_MIN = 2.0;
const float TAU_KNEE = 0.5;
const float CHROMA_RETURN = 1.0;

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

int statsBase(int entry) { return entry * (STATS_HEADER + 2 * GRID_CELLS); }

// Distance past the nearest hole's grown outline (negative inside one), 1e20 with none near,
// for the region in `slot` or, with `direct`, region `index`'s block in the buffer. Holes
// farther than `reach` beyond their box are not measured.
float holeDistance(vec2 p, bool direct, int index, float reach) {
    float nearest = 1e20;
    int holes = int(direct ? faceBlockValue(index, 12) : faceValue(index, 12));
    for (int hole = 0; hole < holes; ++hole) {
        int entry = HEADER + hole * HOLE_STRIDE;
        vec4 box = vec4(faceTablePoint(direct, index, entry + 2), faceTablePoint(direct, index, entry + 4));
        if (p.x < box.x - reach || p.y < box.y - reach || p.x > box.z + reach || p.y > box.w + reach) {
            continue;
        }
        vec2 polygon = faceTablePoint(direct, index, entry);
        nearest = min(nearest, faceTablePolygonDistance(p, direct, index, int(polygon.x), int(polygon.y)));
    }
    return nearest;
}

float chroma(vec3 lab) { return length(lab.yz); }

// ---- Measure --------------------------------------------------------------------------

shared uint lightnessHistogram[LIGHTNESS_BINS];
shared uint chromaHistogram[CHROMA_BINS];
shared float level;
shared float spread;
shared float skinChroma;
shared float measured;
shared vec2 hueSums[256];

// The centre of the bin where the cumulative count first reaches `q` of the total.
float lightnessQuantile(float q) {
    uint total = 0u;
    for (int bin = 0; bin < LIGHTNESS_BINS; ++bin) {
        total += lightnessHistogram[bin];
    }
    uint needed = max(uint(ceil(q * float(total))), 1u), running = 0u;
    for (int bin = 0; bin < LIGHTNESS_BINS; ++bin) {
        running += lightnessHistogram[bin];
        if (running >= needed) {
            return (float(bin) + 0.5) * 100.0 / float(LIGHTNESS_BINS);
        }
    }
    return 100.0;
}

float chromaMedian() {
    uint total = 0u;
    for (int bin = 0; bin < CHROMA_BINS; ++bin) {
        total += chromaHistogram[bin];
    }
    uint needed = max((total + 1u) / 2u, 1u), running = 0u;
    for (int bin = 0; bin < CHROMA_BINS; ++bin) {
        running += chromaHistogram[bin];
        if (running >= needed) {
            return float(bin) + 0.5;
        }
    }
    return float(CHROMA_BINS);
}

void measure() {
    int region = int(gl_WorkGroupID.x);
    uint local = gl_LocalInvocationIndex;
    int entry = region * FACE_DIRECTORY_STRIDE;
    int start = int(geometry.data[entry]);
    int length = int(geometry.data[entry + 1]);
    // The region's block into slot 0 of the shared table (facePolygonDistance reads it there).
    if (local == 0u) {
        faceSlotIndex[0] = region;
        faceSlotBase[0] = length <= FACE_TABLE_FLOATS ? 0 : -1;
        faceSlotCount = 1;
    }
    for (int i = int(local); i < min(length, FACE_TABLE_FLOATS); i += 256) {
        faceTable[i] = geometry.data[start + i];
    }
    if (local < uint(LIGHTNESS_BINS)) {
        lightnessHistogram[local] = 0u;
    }
    if (local < uint(CHROMA_BINS)) {
        chromaHistogram[local] = 0u;
    }
    barrier();
    vec2 low = facePoint(0, 0), high = facePoint(0, 2);
    float feather = faceValue(0, 4), cell = faceValue(0, 7);
    int columns = int(faceValue(0, 8)), rows = int(faceValue(0, 9));
    int first = int(faceValue(0, 10)), count = int(faceValue(0, 11));
    ivec2 last = textureSize(source, 0) - 1;

    // Each lane sums its cells (lane, lane + 256, ...): their means, -1 with no skin pixel.
    float means[CELLS_PER_LANE], chromas[CELLS_PER_LANE];
    vec2 hueSum = vec2(0.0);
    for (int k = 0; k < CELLS_PER_LANE; ++k) {
        means[k] = -1.0;
        chromas[k] = 0.0;
        int index = int(local) + 256 * k;
        if (index >= columns * rows) {
            continue;
        }
        vec2 cellLow = low + vec2(index % columns, index / columns) * cell;
        // Whether the cell is part of the region (its centre within the feather) and wholly
        // inside the polygon (its skin then fills the histograms): one polygon test a cell.
        float centreDistance = facePolygonDistance(cellLow + 0.5 * cell, 0, first, count);
        if (centreDistance >= feather) {
            continue;
        }
        bool inside = centreDistance < -0.71 * cell;
        ivec2 p0 = max(ivec2(floor(cellLow)), ivec2(0));
        ivec2 p1 = min(ivec2(ceil(min(cellLow + cell, high))), last + 1);
        float sum = 0.0, chromaSum = 0.0, pixels = 0.0;
        for (int y = p0.y; y < p1.y; ++y) {
            for (int x = p0.x; x < p1.x; ++x) {
                vec2 p = vec2(x, y) + 0.5;
                // A pixel belongs to the cell whose box holds its centre.
                if (any(lessThan(p, cellLow)) || any(greaterThanEqual(p, cellLow + cell))) {
                    continue;
                }
                if (holeDistance(p, false, 0, 0.0) < 0.0) {
                    continue;
                }
                vec3 lab = labFromRGB(texelFetch(source, ivec2(x, y), 0).rgb);
                sum += lab.x;
                chromaSum += chroma(lab);
                pixels += 1.0;
                if (inside) {
                    hueSum += lab.yz;
                    atomicAdd(lightnessHistogram[clamp(int(lab.x * float(LIGHTNESS_BINS) / 100.0), 0, LIGHTNESS_BINS - 1)], 1u);
                    atomicAdd(chromaHistogram[clamp(int(chroma(lab)), 0, CHROMA_BINS - 1)], 1u);
                }
            }
        }
        means[k] = pixels > 0.0 ? sum / pixels : -1.0;
        chromas[k] = pixels > 0.0 ? chromaSum / pixels : -1.0;
    }
    hueSums[local] = hueSum;
    barrier();
    if (local == 0u) {
        vec2 hueTotal = vec2(0.0);
        for (int lane = 0; lane < 256; ++lane) {
            hueTotal += hueSums[lane];
        }
        hueSums[0] = dot(hueTotal, hueTotal) > 0.0 ? normalize(hueTotal) : vec2(0.0);
        uint total = 0u;
        for (int bin = 0; bin < LIGHTNESS_BINS; ++bin) {
            total += lightnessHistogram[bin];
        }
        float median = lightnessQuantile(0.5);
        level = median;
        spread = median - lightnessQuantile(0.25);
        skinChroma = chromaMedian();
        measured = float(total);
    }
    barrier();
    int base = statsBase(region);
    for (int k = 0; k < CELLS_PER_LANE; ++k) {
        int index = int(local) + 256 * k;
        if (index < columns * rows) {
            stats.data[base + STATS_HEADER + index] = means[k] < 0.0 ? level : means[k];
            stats.data[base + STATS_HEADER + GRID_CELLS + index] = means[k] < 0.0 ? skinChroma : chromas[k];
        }
    }
    if (local == 0u) {
        stats.data[base + 0] = measured >= 32.0 ? 1.0 : 0.0;
        stats.data[base + 1] = level;
        stats.data[base + 2] = max(TAU_MIN, TAU_SPREADS * spread);
        stats.data[base + 3] = skinChroma;
        stats.data[base + 4] = measured;
        stats.data[base + 5] = spread;
        stats.data[base + 6] = hueSums[0].x;
        stats.data[base + 7] = hueSums[0].y;
    }
}

// ---- Apply ----------------------------------------------------------------------------

// The apply pass reads the table straight from the buffer (faceBlockValue): a workgroup
// that gathers it into shared memory (face_table.glsl) needs barriers and 16 KB of it, which
// on lavapipe cost more over the face's few hundred workgroups than the whole pass's work
// (most of its pixels only read their regions' grids).

// The region's low band at p: bilinear between the centres of its grid's cells (`plane` 0:
// L*, 1: C*).
float lowBand(int region, vec2 p, int plane) {
    vec2 g = (p - faceBlockPoint(region, 0)) / faceBlockValue(region, 7) - 0.5;
    ivec2 size = ivec2(faceBlockValue(region, 8), faceBlockValue(region, 9));
    vec2 clamped = clamp(g, vec2(0.0), vec2(size - 1));
    ivec2 c0 = ivec2(floor(clamped));
    ivec2 c1 = min(c0 + 1, size - 1);
    vec2 t = clamped - vec2(c0);
    int base = statsBase(region) + STATS_HEADER + plane * GRID_CELLS;
    float top = mix(stats.data[base + c0.y * size.x + c0.x], stats.data[base + c0.y * size.x + c1.x], t.x);
    float bottom = mix(stats.data[base + c1.y * size.x + c0.x], stats.data[base + c1.y * size.x + c1.x], t.x);
    return mix(top, bottom, t.y);
}

// max(x, 0) with its corner rounded over +-knee (continuous slope from 0 to 1: the mapping
// low -> low - PULL x excess keeps its order).
float softExcess(float x, float knee) {
    if (x <= -knee) {
        return 0.0;
    }
    if (x >= knee) {
        return x;
    }
    return (x + knee) * (x + knee) / (4.0 * knee);
}

void apply() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(ivec2(gl_GlobalInvocationID.xy), parameters.regionSize))) {
        return;
    }
    vec2 p = vec2(pixel) + 0.5;
    vec4 original = texelFetch(source, pixel, 0);
    // The regions' largest weighted corrections (continuous across the feathers where two
    // regions meet, and nothing counted twice there).
    float darken = 0.0, chromaLift = 0.0, weight = 0.0, highlight = 0.0;
    vec2 hue = vec2(0.0);
    for (int region = 0; region < parameters.faceCount; ++region) {
        int base = statsBase(region);
        if (!faceBoxMeets(faceBox(region), p, p) || stats.data[base] == 0.0) {
            continue;
        }
        float level = stats.data[base + 1], tau = stats.data[base + 2];
        float low = lowBand(region, p, 0), lowChroma = lowBand(region, p, 1);
        float above = low - level;
        // Lit skin keeps its chroma over L* + 16 (more light scales both alike); a specular
        // highlight adds white, which lowers it: only that share of the excess is shine.
        float skinRatio = stats.data[base + 3] / (level + 16.0);
        float whiter = 1.0 - lowChroma / (low + 16.0) / max(skinRatio, 1e-3);
        float pull = PULL * smoothstep(SPECULAR_LOW, SPECULAR_HIGH, whiter) * softExcess(above - tau, TAU_KNEE * tau);
        // Most skin has no excess: its geometry (the costly part) is not needed then.
        if (pull <= 0.0 && parameters.view == 0) {
            continue;
        }
        float feather = faceBlockValue(region, 4), holeFeather = faceBlockValue(region, 5);
        float d = faceBlockPolygonDistance(p, region, int(faceBlockValue(region, 10)), int(faceBlockValue(region, 11)));
        if (d >= feather) {
            continue;
        }
        float c = (1.0 - smoothstep(-feather, feather, d)) * smoothstep(0.0, 2.0 * holeFeather, holeDistance(p, true, region, 2.0 * holeFeather))
            * faceBlockValue(region, 6);
        // The chroma a specular highlight washes out: the skin's chroma ratio at the new low
        // band over the low band's own, returned by the share of the excess taken out.
        float gain = min(skinRatio * (low - pull + 16.0) / max(lowChroma, 1e-3), MAX_CHROMA_GAIN) - 1.0;
        darken = max(darken, c * pull);
        float lift = c * (above > 0.0 ? pull / above : 0.0) * max(gain, 0.0) * lowChroma;
        if (lift > chromaLift) {
            chromaLift = lift;
            hue = vec2(stats.data[base + 6], stats.data[base + 7]);
        }
        weight = max(weight, c);
        highlight = max(highlight, c * clamp(pull / (PULL * tau), 0.0, 1.0));
    }
    if (parameters.view == 1) {
        vec3 shown = mix(original.rgb, vec3(0.0, 0.0, 1.0), 0.6 * weight);
        imageStore(destination, pixel, vec4(mix(shown, vec3(1.0, 0.0, 0.0), highlight), original.a));
        return;
    }
    if (darken * parameters.strength <= 0.0) {
        imageStore(destination, pixel, original);
        return;
    }
    vec3 lab = labFromRGB(original.rgb);
    lab.x -= parameters.strength * darken;
    // A region with no hue measured (no skin a*, b* at all) lifts along the pixel's own.
    vec2 direction = dot(hue, hue) > 0.25 ? hue : (dot(lab.yz, lab.yz) > 0.0 ? normalize(lab.yz) : vec2(0.0));
    lab.yz += parameters.strength * CHROMA_RETURN * chromaLift * direction;
    imageStore(destination, pixel, vec4(rgbFromLab(lab), original.a));
}

void main() {
    if (MEASURE == 1) {
        measure();
    } else {
        apply();
    }
}
