#version 450
// `render --matte-zones`: the zone-intensity map (the skin mask's g) where the skin mask (r)
// reaches, at frame size, sampled as the blend samples the mask (linear, at pixel centres);
// 0 elsewhere, and everywhere in a frame without a mask (no face).

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D mask;   // linear: r = skin, g = zone intensity
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;  // frame W, H
    int hasMask;
} p;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, p.size))) {
        return;
    }
    float zone = 0.0;
    if (p.hasMask != 0) {
        vec4 m = texture(mask, (vec2(pixel) + 0.5) / vec2(p.size));
        zone = m.r > 0.0 ? clamp(m.g, 0.0, 1.0) : 0.0;
    }
    imageStore(destination, pixel, vec4(zone));
}
