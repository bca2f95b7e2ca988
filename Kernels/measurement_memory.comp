#version 450
// Per-entry measurements (a retouch stage's stats, the strength fit's gain) smoothed over
// frames by track, in place, between the measurement and the pass that reads it. One
// workgroup per entry. Each slot of the memory keeps the entry's last raw measurement and
// its smoothed value. A fresh slot (a new track or part, or a memory just made), or an
// invalid measurement either side (its validity float 0), takes the raw one as it is. A raw
// measurement equal to the last one in every float (the face's pixels and landmarks
// repeated the frame before) keeps the smoothed value unchanged, so a repeated frame
// renders the same. Otherwise the smoothed value moves towards the raw one by `newWeight`
// (an exponential average), except the floats in [rawFrom, rawTo), which are frame
// positions and are passed through.
layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Stats { float data[]; } stats;            // entries x stride
layout(std430, binding = 1) readonly buffer Entries { ivec2 data[]; } entries; // slot, fresh
layout(std430, binding = 2) buffer Memory { float data[]; } memory;          // slots x 2 x stride

layout(push_constant) uniform Parameters {
    int stride;
    int validity;   // index of the validity float, or -1
    int rawFrom;    // floats passed through unsmoothed
    int rawTo;
    float newWeight;
} parameters;

shared bool differs;
shared bool restarts;

void main() {
    int entry = int(gl_WorkGroupID.x);
    int lane = int(gl_LocalInvocationID.x);
    int stride = parameters.stride;
    ivec2 slot = entries.data[entry];
    int raw = entry * stride;
    int last = slot.x * 2 * stride;
    int smoothed = last + stride;
    if (lane == 0) {
        differs = false;
        bool invalid = parameters.validity >= 0
            && (stats.data[raw + parameters.validity] == 0.0 || memory.data[smoothed + parameters.validity] == 0.0);
        restarts = slot.y != 0 || invalid;
    }
    barrier();
    for (int i = lane; i < stride; i += 64) {
        if (stats.data[raw + i] != memory.data[last + i]) {
            differs = true;
        }
    }
    barrier();
    for (int i = lane; i < stride; i += 64) {
        float value = stats.data[raw + i];
        if (restarts) {
            memory.data[last + i] = value;
            memory.data[smoothed + i] = value;
        } else if (differs) {
            memory.data[last + i] = value;
            bool passed = i >= parameters.rawFrom && i < parameters.rawTo;
            float kept = passed ? value : mix(memory.data[smoothed + i], value, parameters.newWeight);
            memory.data[smoothed + i] = kept;
            stats.data[raw + i] = kept;
        } else {
            stats.data[raw + i] = memory.data[smoothed + i];
        }
    }
}
