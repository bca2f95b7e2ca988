#version 450
// Weighted non-maximum suppression over one model's candidates of a detection pass
// (DetectionCandidate.suppress is the CPU reference): in order of score (ties by box
// position, as there), the best remaining candidate absorbs every remaining one whose box
// overlaps it by more than `overlapThreshold` IoU, itself included, and the detection is the
// score-weighted mean of their boxes and keypoints with the best score. A degenerate (empty)
// box absorbs only its exact copies and is kept as it is. One workgroup: 1. each candidate's
// rank by counting, 2. the greedy pass in rank order, 3. the means, summed in rank order.
// `count` of the output is the number of detections, even past its capacity.
#include "face_detection_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Candidates {
    uint candidateCount;
    uint candidateCapacity;
    uint candidatePadding0;
    uint candidatePadding1;
    float candidates[];
};
// Scratch, 2 x candidateCapacity: the candidates in rank order, then each one's absorber
// (its rank; -1 while it remains).
layout(std430, binding = 1) coherent buffer Work { int work[]; };
layout(std430, binding = 2) buffer Detections {
    uint count;
    uint capacity;
    uint padding0;
    uint padding1;
    float detections[];
};

layout(push_constant) uniform Parameters {
    float overlapThreshold;
} parameters;

const uint MAX_KEPT = 256u;
shared uint keptRanks[MAX_KEPT];
shared uint keptCount;
shared int alive;

float value(uint candidate, uint field) { return candidates[candidate * DETECTION_RECORD + field]; }

// Whether candidate a goes before b: higher score, then larger low x, then larger low y
// (the CPU's order), then the lower index (only exact ties; the index is arbitrary there).
bool before(uint a, uint b) {
    float sa = value(a, 0u), sb = value(b, 0u);
    if (sa != sb) return sa > sb;
    float xa = value(a, 1u), xb = value(b, 1u);
    if (xa != xb) return xa > xb;
    float ya = value(a, 2u), yb = value(b, 2u);
    if (ya != yb) return ya > yb;
    return a < b;
}

float iou(uint a, uint b) {
    vec2 lowA = vec2(value(a, 1u), value(a, 2u)), highA = vec2(value(a, 3u), value(a, 4u));
    vec2 lowB = vec2(value(b, 1u), value(b, 2u)), highB = vec2(value(b, 3u), value(b, 4u));
    vec2 overlap = max(min(highA, highB) - max(lowA, lowB), vec2(0.0));
    float intersection = overlap.x * overlap.y;
    float areaA = (highA.x - lowA.x) * (highA.y - lowA.y), areaB = (highB.x - lowB.x) * (highB.y - lowB.y);
    float union_ = areaA + areaB - intersection;
    return union_ > 0.0 ? intersection / union_ : 0.0;
}

bool identical(uint a, uint b) {
    for (uint field = 0u; field < 5u; ++field) if (value(a, field) != value(b, field)) return false;
    return true;
}

void main() {
    uint lane = gl_LocalInvocationID.x, lanes = gl_WorkGroupSize.x;
    uint n = min(candidateCount, candidateCapacity);
    for (uint i = lane; i < n; i += lanes) {
        uint rank = 0u;
        for (uint j = 0u; j < n; ++j) if (j != i && before(j, i)) ++rank;
        work[rank] = int(i);
        work[candidateCapacity + rank] = -1;
    }
    if (lane == 0u) keptCount = 0u;
    memoryBarrierBuffer();
    barrier();

    for (uint top = 0u; top < n; ++top) {
        if (lane == 0u) alive = work[candidateCapacity + top] < 0 ? 1 : 0;
        memoryBarrierShared();
        barrier();
        if (alive != 0) {
            uint t = uint(work[top]);
            bool degenerate = iou(t, t) <= parameters.overlapThreshold;
            for (uint m = top + lane; m < n; m += lanes) {
                if (work[candidateCapacity + m] >= 0) continue;
                uint c = uint(work[m]);
                bool absorbed = degenerate ? (m == top || identical(c, t)) : iou(c, t) > parameters.overlapThreshold;
                if (absorbed) work[candidateCapacity + m] = int(top);
            }
            if (lane == 0u) {
                if (keptCount < MAX_KEPT) keptRanks[keptCount] = top;
                keptCount += 1u;
            }
        }
        memoryBarrierBuffer();
        memoryBarrierShared();
        barrier();
    }

    uint kept = min(keptCount, min(MAX_KEPT, capacity));
    if (lane == 0u) count = keptCount;
    for (uint slot = lane; slot < kept; slot += lanes) {
        uint top = keptRanks[slot], t = uint(work[top]);
        float total = 0.0;
        float sums[16];
        for (uint field = 0u; field < 16u; ++field) sums[field] = 0.0;
        for (uint m = top; m < n; ++m) {
            if (work[candidateCapacity + m] != int(top)) continue;
            uint c = uint(work[m]);
            if (iou(c, t) <= parameters.overlapThreshold) continue;
            float score = value(c, 0u);
            total += score;
            for (uint field = 0u; field < 16u; ++field) sums[field] += value(c, 1u + field) * score;
        }
        uint base = slot * DETECTION_RECORD;
        detections[base] = value(t, 0u);
        for (uint field = 0u; field < 16u; ++field) {
            detections[base + 1u + field] = total > 0.0 ? sums[field] / total : value(t, 1u + field);
        }
    }
}
