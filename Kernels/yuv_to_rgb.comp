#version 450
#extension GL_GOOGLE_include_directive : enable
// Decoded planes (as stored, any supported layout and bit depth) -> the working image:
// non-linear R'G'B' in the stream's primaries, full range, rgba16f, upright. No clamping,
// so values outside [0,1] survive and the conversion back is lossless.
#include "video_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

// The plane layout (LAYOUT_*), fixed per pipeline: on a CPU Vulkan a branch on a push
// constant runs both of its sides.
layout(constant_id = 0) const int LAYOUT_KIND = LAYOUT_PLANAR;

layout(binding = 0) uniform sampler2D lumaPlane;   // Y, or RGBA for LAYOUT_RGBA (nearest)
layout(binding = 1) uniform sampler2D chromaPlane; // U, or UV interleaved (linear)
layout(binding = 2) uniform sampler2D crPlane;     // V for LAYOUT_PLANAR (linear)
layout(binding = 3) writeonly uniform image2D working;

layout(push_constant) uniform Parameters {
    ivec2 outputSize;     // upright size
    ivec2 storedSize;     // luma plane size
    ivec2 chromaSize;
    int orientation;
    vec4 chromaTransform; // chroma texel coordinate = stored * xy + zw
    vec4 range;           // code offsets (luma, chroma) and scales (luma, chroma)
    vec4 toR;             // R' = dot(toR.xyz, (Y', Pb, Pr)); toR.w = sample scale
    vec4 toG;
    vec4 toB;
} parameters;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.outputSize))) {
        return;
    }
    ivec2 stored = storedPixel(pixel, parameters.orientation, parameters.storedSize);
    vec4 lumaTexel = texelFetch(lumaPlane, stored, 0);
    if (LAYOUT_KIND == LAYOUT_RGBA) {
        imageStore(working, pixel, lumaTexel);
        return;
    }
    float sampleScale = parameters.toR.w;
    vec2 chromaCoordinate = (vec2(stored) * parameters.chromaTransform.xy + parameters.chromaTransform.zw)
        / vec2(parameters.chromaSize);
    vec2 chroma = vec2(parameters.range.y);
    if (LAYOUT_KIND == LAYOUT_PLANAR) {
        chroma = vec2(texture(chromaPlane, chromaCoordinate).r, texture(crPlane, chromaCoordinate).r) * sampleScale;
    } else if (LAYOUT_KIND == LAYOUT_SEMI_PLANAR) {
        chroma = texture(chromaPlane, chromaCoordinate).rg * sampleScale;
    }
    float luma = (lumaTexel.r * sampleScale - parameters.range.x) * parameters.range.z;
    vec2 pbpr = (chroma - parameters.range.y) * parameters.range.w;
    vec3 yuv = vec3(luma, pbpr);
    imageStore(working, pixel, vec4(dot(parameters.toR.xyz, yuv), dot(parameters.toG.xyz, yuv), dot(parameters.toB.xyz, yuv), 1.0));
}
