#version 450
// The base of the tracker overlay: the frame with the person mask tinted over it,
// out = mix(in, tint, strength * mask). The mask may be any size (linear sampler).

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D frame;
layout(binding = 1) uniform sampler2D mask;
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    vec4 tint;    // rgb, strength in w
    ivec2 size;   // W, H
} p;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, p.size))) {
        return;
    }
    vec4 colour = texelFetch(frame, pixel, 0);
    float weight = p.tint.w * clamp(texture(mask, (vec2(pixel) + 0.5) / vec2(p.size)).r, 0.0, 1.0);
    imageStore(destination, pixel, vec4(mix(colour.rgb, p.tint.rgb, weight), colour.a));
}
