#version 450
// Whether a tracked face's region of the frame differs from the previous frame's: one flag
// per face, set by any pixel of its box whose colour changed. A face whose region repeats
// exactly keeps its previous landmarks (FaceTracker), so a repeated frame renders the same.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D current;  // nearest: this frame
layout(binding = 1) uniform sampler2D previous; // nearest: the frame before
layout(std430, binding = 2) buffer Flags {
    uint changed[];
};

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    int face;
} parameters;

void main() {
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(offset, parameters.size))) {
        return;
    }
    ivec2 pixel = parameters.origin + offset;
    if (texelFetch(current, pixel, 0).rgb != texelFetch(previous, pixel, 0).rgb) {
        atomicOr(changed[parameters.face], 1u);
    }
}
