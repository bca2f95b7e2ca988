#version 450
// Optional global sharpen after the composite (unsharp mask with a 3x3 binomial blur):
// out = in + amount * (in - blur(in)). Applied to the whole frame, never inside the
// masked smoothing, where it would amplify the mask edge into a halo.
layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;   // nearest
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;
    float amount;
} parameters;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    ivec2 last = parameters.size - 1;
    vec4 centre = texelFetch(source, pixel, 0);
    vec4 blurred = vec4(0.0);
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            float w = float((2 - abs(dx)) * (2 - abs(dy))) / 16.0;
            blurred += w * texelFetch(source, clamp(pixel + ivec2(dx, dy), ivec2(0), last), 0);
        }
    }
    vec3 sharpened = centre.rgb + parameters.amount * (centre.rgb - blurred.rgb);
    imageStore(destination, pixel, vec4(clamp(sharpened, 0.0, 1.0), centre.a));
}
