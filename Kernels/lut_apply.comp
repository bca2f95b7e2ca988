#version 450
#extension GL_GOOGLE_include_directive : enable
// Applies a 3D colour LUT with trilinear interpolation:
//   out = mix(in, lut(in), strength * weight)
// The N^3 table sits in a 2D image of N slices side by side (texel (r + b*N, g)), so two
// bilinear fetches (inside the slices of the two nearest blue levels) and one mix along
// blue give the trilinear value. `weight` is the skin mask with USE_MASK, else 1 (a
// specialisation constant: on a CPU Vulkan a branch on a push constant runs both sides).
// Strength 0 is the identity and is never dispatched (the host copies instead). Only the
// pixels of the region (origin, extent) are written; each reads only its own pixel, so the
// destination may be the source (the chain grades in place).

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int USE_MASK = 0;

layout(binding = 0) uniform sampler2D source;   // working image (nearest)
layout(binding = 1) uniform sampler2D table;    // N*N x N, linear sampler
layout(binding = 2) uniform sampler2D mask;     // r16f/r32f weight, linear; ignored unless USE_MASK
layout(binding = 3) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;     // the frame
    ivec2 origin;   // the region written
    ivec2 extent;
    int lutSize;
    vec4 domainMin;    // xyz; w = strength
    vec4 domainScale;  // xyz = 1 / (max - min)
} parameters;

vec3 sampleSlice(vec2 redGreen, float blueSlice) {
    float n = float(parameters.lutSize);
    // Texel centres of the slice: x in [b*N + 0.5, b*N + N - 0.5], y in [0.5, N - 0.5].
    vec2 texel = vec2(blueSlice * n + 0.5 + redGreen.x * (n - 1.0), 0.5 + redGreen.y * (n - 1.0));
    return texture(table, texel / vec2(n * n, n)).rgb;
}

void main() {
    ivec2 offset = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(offset, parameters.extent))) {
        return;
    }
    ivec2 pixel = parameters.origin + offset;
    vec4 colour = texelFetch(source, pixel, 0);
    vec3 coordinate = clamp((colour.rgb - parameters.domainMin.xyz) * parameters.domainScale.xyz, 0.0, 1.0);
    float blue = coordinate.b * float(parameters.lutSize - 1);
    float lower = floor(blue);
    float upper = min(lower + 1.0, float(parameters.lutSize - 1));
    vec3 graded = mix(sampleSlice(coordinate.rg, lower), sampleSlice(coordinate.rg, upper), blue - lower);
    float weight = parameters.domainMin.w;
    if (USE_MASK != 0) {
        weight *= texture(mask, (vec2(pixel) + 0.5) / vec2(parameters.size)).r;
    }
    imageStore(destination, pixel, vec4(mix(colour.rgb, graded, weight), colour.a));
}
