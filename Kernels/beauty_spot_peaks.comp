#version 450
#extension GL_GOOGLE_include_directive : enable
// Spot list, for the cap on the number of spots: one entry per filled blob, at the pixel
// where its fill (luma lift) peaks. A pixel is a peak when its lift is above a floor and
// no other pixel within `windowRadius` lifts more (ties go to the earlier pixel in scan
// order, so a flat top still gives one peak). Peaks are appended to a list; `count` keeps
// counting past the list's capacity so the cap pass knows the list overflowed.
// A peak is ranked by how dark the blob is against its surroundings (the mean luma of a
// ring at twice either spot radius, the brighter one, minus its own) times its fill
// weight: the fill itself saturates at the largest lift, so it cannot rank.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;     // linear: the frame
layout(binding = 1) uniform sampler2D spotFixed;  // nearest: rgb fixed, a = fill weight
layout(std430, binding = 2) buffer Peaks {
    uint count;
    uint capacity;
    uint padding0;
    uint padding1;
    vec4 peaks[];   // x, y (pixel centre), rank value, unused
};
#include "beauty_pixel_list.glsl"
PIXEL_LIST(SpotFills, fills, 3);  // the pixels spot removal filled

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    vec2 inverseFrame;  // 1 / frame size
    float windowRadius; // px
    float minLift;      // luma lift below which a fill is not a spot
    float fineRadius;   // px, the spot scales
    float coarseRadius;
} parameters;

const int RING = 12;

float ringLuma(vec2 centre, float radius) {
    float sum = 0.0;
    for (int i = 0; i < RING; ++i) {
        float angle = float(i) * (6.28318530718 / float(RING));
        sum += beautyLuma(texture(source, (centre + radius * vec2(cos(angle), sin(angle))) * parameters.inverseFrame).rgb);
    }
    return sum / float(RING);
}

float liftAt(ivec2 pixel) {
    vec4 fixedColour = texelFetch(spotFixed, pixel, 0);
    if (fixedColour.a <= 0.0) {
        return 0.0;
    }
    return beautyLuma(fixedColour.rgb) - beautyLuma(texelFetch(source, pixel, 0).rgb);
}

// Over the filled pixels' list (no other pixel has a fill).
void main() {
    uint index = pixelListIndex();
    if (index >= fills.count) {
        return;
    }
    ivec2 pixel = pixelListEntry(fills.pixels[index]);
    float own = liftAt(pixel);
    if (own <= parameters.minLift) {
        return;
    }
    int reach = int(ceil(parameters.windowRadius));
    float radiusSquared = parameters.windowRadius * parameters.windowRadius;
    ivec2 low = parameters.origin;
    ivec2 high = parameters.origin + parameters.size - 1;
    for (int dy = -reach; dy <= reach; ++dy) {
        for (int dx = -reach; dx <= reach; ++dx) {
            if ((dx == 0 && dy == 0) || float(dx * dx + dy * dy) > radiusSquared) {
                continue;
            }
            ivec2 other = pixel + ivec2(dx, dy);
            if (any(lessThan(other, low)) || any(greaterThan(other, high))) {
                continue;
            }
            float lift = liftAt(other);
            bool earlier = dy < 0 || (dy == 0 && dx < 0);
            if (lift > own || (earlier && lift == own)) {
                return;
            }
        }
    }
    vec2 centre = vec2(pixel) + 0.5;
    float surroundings = max(ringLuma(centre, 2.0 * parameters.fineRadius), ringLuma(centre, 2.0 * parameters.coarseRadius));
    float darkness = max(0.0, surroundings - beautyLuma(texelFetch(source, pixel, 0).rgb));
    uint slot = atomicAdd(count, 1u);
    if (slot < capacity) {
        // the detection's confidence first (in steps of 1/32), the darkness within a step
        float confidence = floor(texelFetch(spotFixed, pixel, 0).a * 32.0) / 32.0;
        peaks[slot] = vec4(centre, confidence + min(darkness, 1.0) / 32.0, 0.0);
    }
}
