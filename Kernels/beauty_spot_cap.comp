#version 450
#extension GL_GOOGLE_include_directive : enable
// The cap on the number of spots: when more blobs were found than `maxCount`, only the
// `maxCount` ranked highest (darkest against their surroundings) are kept. Every filled pixel belongs to the nearest
// peak within `linkRadius`; the fill is undone (original colour, weight 0) when that peak
// ranks below the cap, or when there is none (its peak did not fit in the list). The peaks
// are listed in whatever order the GPU's atomics gave them, so every tie (rank value, link
// distance) is broken by position: the same frame keeps the same spots on every run (on the
// H200, 41 of 300 frames of a render differed between two runs of one binary before).
//
// Three passes (PASS), each an indirect dispatch the first one sizes: GROUPS (one
// invocation) gives the next two their workgroups, none when the cap does not bind; RANK
// (over the listed peaks) marks the peaks the cap keeps; CAP (over the filled pixels) undoes
// the fills whose peak is not kept. A CPU Vulkan (lavapipe) runs both sides of every branch:
// returning early when the cap does not bind saved nothing there, and ranking a peak once
// per filled pixel cost a loop over the list per pixel.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

const int PASS_GROUPS = 0;
const int PASS_RANK = 1;
const int PASS_CAP = 2;
layout(constant_id = 0) const int PASS = PASS_CAP;

layout(binding = 0) uniform sampler2D source;                  // nearest: the frame
layout(rgba16f, binding = 1) uniform image2D spotFixed;        // in place
layout(std430, binding = 2) readonly buffer Peaks {
    uint count;
    uint capacity;
    // the peaks follow (beauty_spot_peaks.comp), read through `peakTexels`
};
// The peak list's entries as texels: a CPU Vulkan (lavapipe) loads a storage buffer a lane
// and a float at a time, and every filled pixel reads every peak.
layout(binding = 4, rgba32f) readonly uniform imageBuffer peakTexels;
#define PEAK(i) imageLoad(peakTexels, int(i))
layout(std430, binding = 5) buffer CapState {
    uvec4 rankGroups; // VkDispatchIndirectCommands (xyz) of RANK and CAP
    uvec4 capGroups;
    uint kept[];      // RANK: 1 where the peak of that index is kept
} state;
#include "beauty_pixel_list.glsl"
PIXEL_LIST(SpotFills, fills, 3);  // the pixels spot removal filled

layout(push_constant) uniform Parameters {
    float linkRadius; // px
    int maxCount;
} parameters;

// Whether peak a ranks above peak b: the higher value, then the upper, then the left one (a
// total order: one peak per pixel).
bool ranksAbove(vec4 a, vec4 b) {
    return a.z > b.z || (a.z == b.z && (a.y < b.y || (a.y == b.y && a.x < b.x)));
}

// The next passes' workgroups: the listed peaks' and the fills', when the cap binds.
void sizePasses() {
    bool binds = count > uint(parameters.maxCount);
    uint listed = min(count, capacity);
    state.rankGroups = uvec4(binds ? (listed + PIXEL_LIST_GROUP - 1u) / PIXEL_LIST_GROUP : 0u, 1u, 1u, 0u);
    state.capGroups = uvec4(binds ? fills.groupsX : 0u, 1u, 1u, 0u);
}

// Whether listed peak `index` ranks among the `maxCount` highest.
void rankPeak(uint index) {
    uint listed = min(count, capacity);
    if (index >= listed) {
        return;
    }
    vec4 own = PEAK(index);
    int rank = 0;
    for (uint i = 0u; i < listed; ++i) {
        if (ranksAbove(PEAK(i), own)) {
            ++rank;
        }
    }
    state.kept[index] = rank < parameters.maxCount ? 1u : 0u;
}

// Over the filled pixels' list (no other pixel has a fill).
void capFill(uint index) {
    if (index >= fills.count) {
        return;
    }
    ivec2 pixel = pixelListEntry(fills.pixels[index]);
    vec4 fixedColour = imageLoad(spotFixed, pixel);
    if (fixedColour.a <= 0.0) {
        return;
    }
    vec2 centre = vec2(pixel) + 0.5;
    uint listed = min(count, capacity);
    int nearest = -1;
    float nearestDistance = parameters.linkRadius * parameters.linkRadius;
    for (uint i = 0u; i < listed; ++i) {
        vec4 peak = PEAK(i);
        vec2 offset = peak.xy - centre;
        float distanceSquared = dot(offset, offset);
        if (distanceSquared < nearestDistance
            || (distanceSquared == nearestDistance && (nearest < 0 || ranksAbove(peak, PEAK(max(nearest, 0)))))) {
            nearestDistance = distanceSquared;
            nearest = int(i);
        }
    }
    bool keep = nearest >= 0 && state.kept[max(nearest, 0)] != 0u;
    if (!keep) {
        imageStore(spotFixed, pixel, vec4(texelFetch(source, pixel, 0).rgb, 0.0));
    }
}

void main() {
    if (PASS == PASS_GROUPS) {
        if (gl_GlobalInvocationID == uvec3(0u)) {
            sizePasses();
        }
    } else if (PASS == PASS_RANK) {
        rankPeak(pixelListIndex());
    } else {
        capFill(pixelListIndex());
    }
}
