#version 450
#extension GL_GOOGLE_include_directive : enable
// Spot removal: small dark blobs at two scales, filled from the ring around them.
// For each scale r a pixel compares the mean of a small disc around it (radius ~r) with a
// ring of 12 samples at 2r. A blob is "darker than a uniform ring that encloses it":
// contrast above the threshold, every ring sample but the darkest brighter than the disc
// (a wrinkle or shadow edge crossing the ring is not enclosed), ring spread small next to
// the contrast (an edge or a feature gives an uneven ring), and
// contrast below a cap (very dark, high-contrast marks are features, not blemishes).
// The fill moves the pixel towards the ring's mean colour, softly (by the detection
// score) and by at most maxLift in luma. Only where the mask's spot permission (b) allows it.
// Output: rgb = fixed colour, a = the fill weight (0 where nothing changed).
//
// Spot memory (issue 17): the fill weight is averaged over frames where the face is, so a
// faint spot that noise lifts over and under the threshold does not come and go. The last
// frame's weights (`memoryIn`) are read where this pixel was then, through the face's motion
// (`warp`, an affine fit of its mesh from this frame to the last; so a spot moves with the
// face), inside the last frame's region of the face. MEMORY_NONE: a face not seen in the
// last frame takes its own weight. MEMORY_HELD: the face's landmarks repeat the last frame's
// (the picture repeats), so its weights repeat exactly. MEMORY_MOVED: the weight moves from
// the remembered one towards this frame's by `newWeight`. The fill is always this frame's
// lift (ring minus pixel), so a remembered weight over clean skin changes next to nothing.
// The weights are written to `memoryOut` for the next frame.
//
// Three passes (PASS), and one before the second (PASS_LUMA: the source's luma for the
// second's candidate test): the first writes the region unchanged (no fill); the second, over the
// part of it where the mask can permit spot removal (the faces' ovals), lists the pixels that
// may be spots and leaves the rest as the first wrote them (outside the permission, or failing
// at both scales what the full test asks of the ring's four axis samples and the disc, with
// nothing remembered; read from the luma image, cheaper than the full test's filtered samples
// on a CPU Vulkan); the third runs the full test
// over that list only (an indirect dispatch) and lists the pixels it fills, which are all the
// peak and cap passes look at. A CPU Vulkan (lavapipe) runs both sides of every branch, so an
// early exit saves nothing there: only work left out of a dispatch is saved.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int PASS_SETTLE = 0;
const int PASS_CLASSIFY = 1;
const int PASS_LISTED = 2;
const int PASS_LUMA = 3;
layout(constant_id = 0) const int PASS = PASS_SETTLE;

layout(binding = 0) uniform sampler2D source;   // linear sampler
layout(binding = 1) uniform sampler2D mask;     // linear sampler, skin mask image
layout(binding = 2) writeonly uniform image2D destination;
layout(binding = 3) uniform sampler2D memoryIn;              // linear: the last frame's weights
layout(binding = 4) writeonly uniform image2D memoryOut;    // this frame's (r16)
#include "beauty_pixel_list.glsl"
PIXEL_LIST(SpotCandidates, candidates, 5);  // may be spots: the full test's pixels
PIXEL_LIST(SpotFills, fills, 6);            // filled: the peak list's and the cap's pixels
// The source's luma over the classified pixels and the ring around them (PASS_LUMA writes
// it, the candidate test reads it), from `lumaOrigin`.
layout(r32f, binding = 7) uniform image2D lumaImage;

// How far a pixel must miss the candidate test's bounds to be left out: the test reads
// texels and interpolates itself where the full test samples bilinearly, which may differ
// by the filter's precision (SpotRemoval.candidateMargin, from the device's sub-texel bits).
layout(constant_id = 2) const float CANDIDATE_MARGIN = 1.0 / 128.0;
// CLASSIFY_ALL: every permitted pixel is a candidate (tests compare the lists against it).
layout(constant_id = 1) const int CLASSIFY_ALL = 0;

layout(push_constant) uniform Parameters {
    ivec2 origin;       // region of interest in frame pixels
    ivec2 size;
    vec2 inverseFrame;  // 1 / frame size
    float fineRadius;   // px
    float coarseRadius; // px
    float threshold;    // luma contrast where a blob starts to count
    float contrastCap;  // luma contrast above which it is a feature, not a spot
    float spreadRatio;  // ring luma spread (mean abs deviation) over contrast above which the ring is not uniform
    float maxLift;      // largest luma change
    float strength;     // 0...1
    int memory;         // MEMORY_NONE, MEMORY_HELD or MEMORY_MOVED
    ivec2 lastOrigin;   // the face's region in the last frame (where memoryIn is valid)
    ivec2 lastSize;
    vec4 warpX;         // this frame's pixel -> the last frame's: x' = dot(warpX.xyz, (x, y, 1))
    vec4 warpY;
    float newWeight;    // the new frame's weight in the average (MeasurementMemory.newWeight)
    ivec2 lumaOrigin;   // frame pixel of lumaImage's (0, 0)
} parameters;

const int MEMORY_NONE = 0;
const int MEMORY_HELD = 1;
const int MEMORY_MOVED = 2;

const int RING = 12;

vec3 sampleAt(vec2 position) {
    return texture(source, position * parameters.inverseFrame).rgb;
}

// How much darker the pixel is than four points of the ring at `radius` (their mean luma
// minus its own): the cheap test most skin pixels fail.
float quickContrast(vec2 centre, float radius, float ownLuma) {
    float quick = 0.0;
    for (int i = 0; i < 4; ++i) {
        float angle = float(i) * 1.57079632679;
        quick += beautyLuma(sampleAt(centre + 2.0 * radius * vec2(cos(angle), sin(angle))));
    }
    return 0.25 * quick - ownLuma;
}

// Luma of the source texel `texel` (frame pixels), clamped to the frame as the sampler is.
float texelLuma(ivec2 texel) {
    return imageLoad(lumaImage, clamp(texel, ivec2(0), textureSize(source, 0) - 1) - parameters.lumaOrigin).r;
}

// Luma `offset` px along one axis from the centre of `pixel` (`axis` (1, 0) or (0, 1)),
// interpolated between the two texels there as a bilinear sample is.
float axisLuma(ivec2 pixel, ivec2 axis, float offset) {
    float whole = floor(offset);
    ivec2 near = pixel + axis * int(whole);
    return mix(texelLuma(near), texelLuma(near + axis), offset - whole);
}

// Whether `spotScore` can be above 0 at `radius` (within CANDIDATE_MARGIN), from the ring's
// four axis samples and the disc, which the full test reads too: the quick test passes, and
// the enclosure tests hold for those four of the twelve ring samples (every one brighter
// than the disc, all but the darkest by half the threshold).
bool mayBeSpot(ivec2 pixel, float radius, float ownLuma) {
    float ring[4] = float[4](axisLuma(pixel, ivec2(1, 0), 2.0 * radius), axisLuma(pixel, ivec2(0, 1), 2.0 * radius),
                             axisLuma(pixel, ivec2(1, 0), -2.0 * radius), axisLuma(pixel, ivec2(0, 1), -2.0 * radius));
    float h = 0.5 * radius;
    float disc = (2.0 * ownLuma + axisLuma(pixel, ivec2(1, 0), h) + axisLuma(pixel, ivec2(1, 0), -h)
                  + axisLuma(pixel, ivec2(0, 1), h) + axisLuma(pixel, ivec2(0, 1), -h)) / 6.0;
    float low = min(ring[0], ring[1]), high = max(ring[0], ring[1]);
    float low2 = min(ring[2], ring[3]), high2 = max(ring[2], ring[3]);
    float darkest = min(low, low2);
    float secondDarkest = min(max(low, low2), min(high, high2));
    return 0.25 * (ring[0] + ring[1] + ring[2] + ring[3]) - ownLuma >= 0.5 * parameters.threshold - CANDIDATE_MARGIN
        && darkest > disc - CANDIDATE_MARGIN
        && secondDarkest > disc + 0.5 * parameters.threshold - CANDIDATE_MARGIN;
}

// Returns the fill weight; `lift` receives the colour change for that scale. With
// `needsLift` (a remembered spot) the lift is found even where the score is 0.
float spotScore(vec2 centre, float radius, vec3 own, bool needsLift, out vec3 lift) {
    float ownLuma = beautyLuma(own);
    lift = vec3(0.0);
    // Cheap rejection first: the pixel must be darker than four points of the ring by half
    // the threshold before the full test runs.
    if (!needsLift && quickContrast(centre, radius, ownLuma) < 0.5 * parameters.threshold) {
        return 0.0;
    }
    float h = 0.5 * radius;
    vec3 disc = (sampleAt(centre) * 2.0 + sampleAt(centre + vec2(h, 0.0)) + sampleAt(centre - vec2(h, 0.0))
                 + sampleAt(centre + vec2(0.0, h)) + sampleAt(centre - vec2(0.0, h))) / 6.0;
    vec3 ring = vec3(0.0);
    float lumas[RING];
    float ringLuma = 0.0;
    for (int i = 0; i < RING; ++i) {
        float angle = float(i) * (6.28318530718 / float(RING));
        vec3 c = sampleAt(centre + 2.0 * radius * vec2(cos(angle), sin(angle)));
        ring += c;
        lumas[i] = beautyLuma(c);
        ringLuma += lumas[i];
    }
    ring /= float(RING);
    ringLuma /= float(RING);
    // The two darkest and the two brightest ring samples (all the tests below need of their
    // order; no sort: indexing a local array by a variable is slow on a CPU Vulkan).
    float darkest = 1e30, secondDarkest = 1e30, brightest = -1e30, secondBrightest = -1e30;
    for (int i = 0; i < RING; ++i) {
        secondDarkest = min(secondDarkest, max(darkest, lumas[i]));
        darkest = min(darkest, lumas[i]);
        secondBrightest = max(secondBrightest, min(brightest, lumas[i]));
        brightest = max(brightest, lumas[i]);
    }
    // Spread, trimmed: the 2 samples farthest from the mean are left out, so a pore or a
    // hair crossing the ring does not hide the spot inside it.
    float spread = 0.0;
    for (int i = 0; i < RING; ++i) {
        spread += abs(lumas[i] - ringLuma);
    }
    float worst = max(abs(darkest - ringLuma), abs(brightest - ringLuma));
    float second = max(abs(secondDarkest - ringLuma), abs(secondBrightest - ringLuma));
    spread = (spread - worst - second) / float(RING - 2);
    float contrast = ringLuma - beautyLuma(disc);
    float score = smoothstep(parameters.threshold, 2.0 * parameters.threshold, contrast)
        * (1.0 - smoothstep(parameters.contrastCap, 1.5 * parameters.contrastCap, contrast))
        * (1.0 - smoothstep(parameters.spreadRatio * contrast, 2.0 * parameters.spreadRatio * contrast, spread))
        // enclosed: brighter all round (all but the darkest ring sample), which a wrinkle
        // or a shadow edge crossing the ring is not
        * smoothstep(0.5 * parameters.threshold, parameters.threshold, secondDarkest - beautyLuma(disc))
        // and even the darkest ring sample a little brighter: the end of a dark line (a
        // wrinkle, a glasses rim) crosses the ring once, as dark as the blob
        * smoothstep(0.0, 0.5 * parameters.threshold, darkest - beautyLuma(disc))
        // the pixel itself must be in the dark part, not on the skin beside the blob
        * smoothstep(0.25 * parameters.threshold, 0.75 * parameters.threshold, ringLuma - ownLuma);
    lift = ring - own;
    float liftLuma = beautyLuma(lift);
    if (liftLuma > parameters.maxLift) {
        lift *= parameters.maxLift / liftLuma;
    }
    return score;
}

// The weight this pixel had in the last frame, where it was then (0 outside the face's
// last region).
float remembered(ivec2 pixel, vec2 centre) {
    if (parameters.memory == MEMORY_HELD) {
        return beautyInRegion(pixel, parameters.lastOrigin, parameters.lastSize) ? texelFetch(memoryIn, pixel, 0).r : 0.0;
    }
    vec2 there = vec2(dot(parameters.warpX.xyz, vec3(centre, 1.0)), dot(parameters.warpY.xyz, vec3(centre, 1.0)));
    vec2 low = vec2(parameters.lastOrigin) + 0.5, high = vec2(parameters.lastOrigin + parameters.lastSize) - 0.5;
    if (any(lessThan(there, low)) || any(greaterThan(there, high))) {
        return 0.0;
    }
    return texture(memoryIn, there * parameters.inverseFrame).r;
}

void main() {
    ivec2 pixel;
    if (PASS == PASS_LISTED) {
        uint index = pixelListIndex();
        if (index >= candidates.count) {
            return;
        }
        pixel = pixelListEntry(candidates.pixels[index]);
    } else {
        pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
        if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
            return;
        }
    }
    vec4 original = texelFetch(source, pixel, 0);
    if (PASS == PASS_LUMA) {
        imageStore(lumaImage, pixel - parameters.lumaOrigin, vec4(beautyLuma(original.rgb)));
        return;
    }
    if (PASS == PASS_SETTLE) {
        imageStore(destination, pixel, vec4(original.rgb, 0.0));
        imageStore(memoryOut, pixel, vec4(0.0));
        return;
    }
    vec2 centre = vec2(pixel) + 0.5;
    float allowed = texture(mask, centre * parameters.inverseFrame).b * parameters.strength;
    float last = allowed <= 0.0 || parameters.memory == MEMORY_NONE ? 0.0 : remembered(pixel, centre);
    if (PASS == PASS_CLASSIFY) {
        // A candidate unless neither scale can score and nothing is remembered: then no
        // fill, as the full test would find, and the settling pass's values stand.
        float ownLuma = beautyLuma(original.rgb);
        if (allowed > 0.0 && (CLASSIFY_ALL != 0 || last > 0.0 || mayBeSpot(pixel, parameters.fineRadius, ownLuma)
                              || mayBeSpot(pixel, parameters.coarseRadius, ownLuma))) {
            PIXEL_LIST_APPEND(candidates, pixel);
        }
        return;
    }
    if (allowed <= 0.0) {
        imageStore(destination, pixel, vec4(original.rgb, 0.0));
        imageStore(memoryOut, pixel, vec4(0.0));
        return;
    }
    vec3 fineLift;
    vec3 coarseLift;
    float fine = spotScore(centre, parameters.fineRadius, original.rgb, last > 0.0, fineLift);
    float coarse = spotScore(centre, parameters.coarseRadius, original.rgb, last > 0.0, coarseLift);
    // The scale whose fill lifts more; with no score at either (a remembered spot), the one
    // whose ring is brighter over the pixel.
    float fineFill = fine * beautyLuma(fineLift), coarseFill = coarse * beautyLuma(coarseLift);
    bool useFine = fineFill > 0.0 || coarseFill > 0.0 ? fineFill >= coarseFill : beautyLuma(fineLift) >= beautyLuma(coarseLift);
    float weight = (useFine ? fine : coarse) * allowed;
    if (parameters.memory == MEMORY_HELD) {
        weight = last;
    } else if (parameters.memory == MEMORY_MOVED) {
        weight = min(mix(last, weight, parameters.newWeight), allowed);
    }
    vec3 lift = useFine ? fineLift : coarseLift;
    imageStore(destination, pixel, vec4(original.rgb + weight * lift, weight));
    imageStore(memoryOut, pixel, vec4(weight));
    if (weight > 0.0) {
        PIXEL_LIST_APPEND(fills, pixel);
    }
}
