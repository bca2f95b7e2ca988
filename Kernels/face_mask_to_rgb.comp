#version 450
// Writes a single-channel mask (any size, linear sampler) as an opaque grey image of the
// destination's size: `velvet analyze --mask`.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D mask;
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;   // destination W, H
} p;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, p.size))) {
        return;
    }
    float value = clamp(texture(mask, (vec2(pixel) + 0.5) / vec2(p.size)).r, 0.0, 1.0);
    imageStore(destination, pixel, vec4(vec3(value), 1.0));
}
