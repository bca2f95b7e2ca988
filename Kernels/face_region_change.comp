#version 450
// How a region of the frame differs from the previous frame's, one entry per region: a flag
// set by any pixel whose colour changed, and the summed absolute RGB change (in 1/64ths)
// over every `step`-th pixel. Tracked faces' regions are read whole: a face whose region
// repeats exactly keeps its previous landmarks (FaceTracker), so a repeated frame renders the
// same. The whole frame is read sparsely: a large mean change is a cut, which resets tracking.

layout(local_size_x = 16, local_size_y = 16) in;

// 0: one sample an invocation, its change summed. N > 0 (CPU devices, face regions): the
// flag alone, each invocation walking N rows of its column and stopping at the first
// change. lavapipe runs both sides of a branch and pays for shared atomics and barriers
// lane by lane, but leaves a loop once every lane is done: a face that moved is found changed
// on its first row, and no sum is kept where only the flag is read.
layout(constant_id = 0) const int WALK_ROWS = 0;

layout(binding = 0) uniform sampler2D current;  // nearest: this frame
layout(binding = 1) uniform sampler2D previous; // nearest: the frame before
layout(std430, binding = 2) buffer Changes {
    uvec2 changes[]; // (changed, summed change)
};

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;   // in samples (WALK_ROWS > 0: rows in samples, invocations cover rows / WALK_ROWS)
    int entry;
    int step;     // pixels between samples
} parameters;

// Summed in shared memory first, then one global atomic per workgroup: every changed pixel
// adding to one global word serialised the whole dispatch (3.6 ms for a 4K face region on
// the H200). The sums are integers, so the order changes nothing.
shared uint groupChanged;
shared uint groupSum;

bool changedAt(ivec2 offset) {
    ivec2 pixel = parameters.origin + offset * parameters.step;
    return any(greaterThan(abs(texelFetch(current, pixel, 0).rgb - texelFetch(previous, pixel, 0).rgb), vec3(0.0)));
}

void walkColumn() {
    ivec2 start = ivec2(gl_GlobalInvocationID.x, gl_GlobalInvocationID.y * uint(WALK_ROWS));
    if (start.x >= parameters.size.x || start.y >= parameters.size.y) {
        return;
    }
    bool changed = false;
    int rows = min(WALK_ROWS, parameters.size.y - start.y);
    for (int row = 0; row < rows; ++row) {
        if (changedAt(start + ivec2(0, row))) {
            changed = true;
            break;
        }
    }
    if (changed) {
        atomicOr(changes[parameters.entry].x, 1u);
    }
}

void main() {
    if (WALK_ROWS > 0) {
        walkColumn();
        return;
    }
    if (gl_LocalInvocationIndex == 0u) {
        groupChanged = 0u;
        groupSum = 0u;
    }
    barrier();
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    if (all(lessThan(offset, parameters.size))) {
        ivec2 pixel = parameters.origin + offset * parameters.step;
        vec3 difference = abs(texelFetch(current, pixel, 0).rgb - texelFetch(previous, pixel, 0).rgb);
        if (any(greaterThan(difference, vec3(0.0)))) {
            atomicOr(groupChanged, 1u);
            atomicAdd(groupSum, uint(dot(min(difference, vec3(1.0)), vec3(64.0)) + 0.5));
        }
    }
    barrier();
    if (gl_LocalInvocationIndex == 0u && groupChanged != 0u) {
        atomicOr(changes[parameters.entry].x, 1u);
        atomicAdd(changes[parameters.entry].y, groupSum);
    }
}
