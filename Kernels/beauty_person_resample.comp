#version 450
// Resamples the person probability (any resolution, stretched over the frame) onto the
// grid the skin mask blurs it on: a frame-shaped grid, so one isotropic Gaussian there
// is isotropic in the frame too.
layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D person;       // linear sampler
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size; // destination size
} parameters;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    vec2 uv = (vec2(pixel) + 0.5) / vec2(parameters.size);
    imageStore(destination, pixel, vec4(clamp(texture(person, uv).r, 0.0, 1.0)));
}
