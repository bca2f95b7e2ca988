#version 450
#extension GL_GOOGLE_include_directive : enable
// The cap on the number of spots: when more blobs were found than `maxCount`, only the
// `maxCount` ranked highest (darkest against their surroundings) are kept. Every filled pixel belongs to the nearest
// peak within `linkRadius`; the fill is undone (original colour, weight 0) when that peak
// ranks below the cap, or when there is none (its peak did not fit in the list).
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

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    float linkRadius; // px
    int maxCount;
} parameters;

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size) || count <= uint(parameters.maxCount)) {
        return;
    }
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
        if (distanceSquared <= nearestDistance) {
            nearestDistance = distanceSquared;
            nearest = int(i);
        }
    }
    bool keep = false;
    if (nearest >= 0) {
        float value = peaks[nearest].z;
        int rank = 0;
        for (uint i = 0u; i < listed; ++i) {
            float other = peaks[i].z;
            if (other > value || (other == value && int(i) < nearest)) {
                ++rank;
            }
        }
        keep = rank < parameters.maxCount;
    }
    if (!keep) {
        imageStore(spotFixed, pixel, vec4(texelFetch(source, pixel, 0).rgb, 0.0));
    }
}
