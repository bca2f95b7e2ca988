#version 450
// Copies a dense [H, W, 1] float tensor (a segmentation model's probability output)
// into a W x H single-channel image, so later kernels sample it with bilinear filtering.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) readonly buffer Tensor { float values[]; };
layout(binding = 1) writeonly uniform image2D mask;

layout(push_constant) uniform Parameters {
    ivec2 size;   // W, H
    int offset;   // first float of the tensor in the buffer
} p;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, p.size))) {
        return;
    }
    imageStore(mask, pixel, vec4(values[p.offset + pixel.y * p.size.x + pixel.x], 0.0, 0.0, 1.0));
}
