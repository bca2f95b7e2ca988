#version 450
// Resizes a single-channel mask to another size with bilinear filtering, pixel centres
// aligned (half-pixel centres, align_corners = false) and the border clamped: the sampler
// bound must be linear. Used to bring the segmentation probability back to frame size.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;   // destination W, H
} p;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, p.size))) {
        return;
    }
    float value = texture(source, (vec2(pixel) + 0.5) / vec2(p.size)).r;
    imageStore(destination, pixel, vec4(value, 0.0, 0.0, 1.0));
}
