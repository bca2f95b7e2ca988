#version 450
// `render --matte-in`: what the stages after the skin composite (makeup, reshape) made
// reaches the frame only through the user's matte: base = mix(base, staged, matte). Where the
// matte is 0 the base (the skin composite, already weighted by the matte) is kept as it is,
// where it is 1 the staged pixel is taken as it is.

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D staged;    // nearest: the result of makeup and reshape
layout(binding = 1) uniform sampler2D userMatte; // nearest, frame size
layout(binding = 2, rgba16f) uniform image2D base;

layout(push_constant) uniform Parameters {
    ivec2 size;
} p;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, p.size))) {
        return;
    }
    float matte = clamp(texelFetch(userMatte, pixel, 0).r, 0.0, 1.0);
    if (matte <= 0.0) {
        return;
    }
    vec4 result = texelFetch(staged, pixel, 0);
    imageStore(base, pixel, matte >= 1.0 ? result : mix(imageLoad(base, pixel), result, matte));
}
