#version 450
#extension GL_GOOGLE_include_directive : enable
// The cap on the number of spots: when more blobs were found than `maxCount`, only the
// `maxCount` ranked highest (darkest against their surroundings) are kept. Every filled pixel belongs to the nearest
// peak within `linkRadius`; the fill is undone (original colour, weight 0) when that peak
// ranks below the cap, or when there is none (its peak did not fit in the list). The peaks
// are listed in whatever order the GPU's atomics gave them, so every tie (rank value, link
// distance) is broken by position: the same frame keeps the same spots on every run (on the
// H200, 41 of 300 frames of a render differed between two runs of one binary before).
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;                  // nearest: the frame
layout(rgba16f, binding = 1) uniform image2D spotFixed;        // in place
layout(std430, binding = 2) readonly buffer Peaks {
    uint count;
    uint capacity;
    uint padding0;
    uint padding1;
    vec4 peaks[];
};
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

// Over the filled pixels' list (no other pixel has a fill).
void main() {
    uint index = pixelListIndex();
    if (index >= fills.count || count <= uint(parameters.maxCount)) {
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
        vec2 offset = peaks[i].xy - centre;
        float distanceSquared = dot(offset, offset);
        if (distanceSquared < nearestDistance
            || (distanceSquared == nearestDistance && (nearest < 0 || ranksAbove(peaks[i], peaks[nearest])))) {
            nearestDistance = distanceSquared;
            nearest = int(i);
        }
    }
    bool keep = false;
    if (nearest >= 0) {
        vec4 own = peaks[nearest];
        int rank = 0;
        for (uint i = 0u; i < listed; ++i) {
            if (ranksAbove(peaks[i], own)) {
                ++rank;
            }
        }
        keep = rank < parameters.maxCount;
    }
    if (!keep) {
        imageStore(spotFixed, pixel, vec4(texelFetch(source, pixel, 0).rgb, 0.0));
    }
}
