#version 450
// Debug views of the skin stages, drawn over the frame (`velvet render --debug-view`):
//   mode 0, zones: the zone-intensity map (mask image g) as a colour ramp, blue 0 ->
//          green 0.5 -> red 1, over a dimmed frame wherever the skin mask (r) is non-zero;
//   mode 1, spots: the spot fills (spot image a = fill weight) in magenta over the frame.
// The map may have any size; it is sampled in normalised frame coordinates.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D frame;   // nearest
layout(binding = 1) uniform sampler2D map;     // linear
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;  // frame W, H
    int mode;
} parameters;

vec3 ramp(float value) {
    return clamp(vec3(2.0 * value - 1.0, 1.0 - abs(2.0 * value - 1.0), 1.0 - 2.0 * value), 0.0, 1.0);
}

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    vec3 colour = texelFetch(frame, pixel, 0).rgb;
    vec4 value = texture(map, (vec2(pixel) + 0.5) / vec2(parameters.size));
    vec3 result;
    if (parameters.mode == 0) {
        float skin = smoothstep(0.0, 0.1, value.r);
        result = mix(0.5 * colour, ramp(clamp(value.g, 0.0, 1.0)), 0.75 * skin);
    } else {
        result = mix(colour, vec3(1.0, 0.0, 1.0), clamp(1.5 * value.a, 0.0, 1.0));
    }
    imageStore(destination, pixel, vec4(result, 1.0));
}
