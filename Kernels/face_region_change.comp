#version 450
// How a region of the frame differs from the previous frame's, one entry per region: a flag
// set by any pixel whose colour changed, and the summed absolute RGB change (in 1/64ths)
// over every `step`-th pixel. Tracked faces' regions are read whole: a face whose region
// repeats exactly keeps its previous landmarks (FaceTracker), so a repeated frame renders the
// same. The whole frame is read sparsely: a large mean change is a cut, which resets tracking.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D current;  // nearest: this frame
layout(binding = 1) uniform sampler2D previous; // nearest: the frame before
layout(std430, binding = 2) buffer Changes {
    uvec2 changes[]; // (changed, summed change)
};

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;   // in samples
    int entry;
    int step;     // pixels between samples
} parameters;

// Summed in shared memory first, then one global atomic per workgroup: every changed pixel
// adding to one global word serialised the whole dispatch (3.6 ms for a 4K face region on
// the H200). The sums are integers, so the order changes nothing.
shared uint groupChanged;
shared uint groupSum;

void main() {
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
