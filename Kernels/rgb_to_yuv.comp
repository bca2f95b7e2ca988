#version 450
#extension GL_GOOGLE_include_directive : enable
// The working image -> planes for the encoder, in the stored orientation. One invocation
// per chroma sample writes its block of luma samples and the chroma sample; a dispatch may
// cover only the sites of a changed region.
//
// Delta mode (the original frame's planes are at hand): out = original + (convert(processed)
// - convert(reference)), where reference is the working image as decoded. Pixels the effects
// did not touch have a zero delta and come out bit-identical, chroma included; effects
// change the planes only by what they changed. Direct mode converts the processed image.
#include "video_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

// The plane layout (LAYOUT_*) and the mode (1: delta), fixed per pipeline: on a CPU Vulkan a
// branch on a push constant runs both of its sides.
layout(constant_id = 0) const int LAYOUT_KIND = LAYOUT_PLANAR;
layout(constant_id = 1) const int DELTA_MODE = 0;
// Luma samples per chroma sample across and down, and whether chroma is co-sited with the
// even luma columns (then filtered [1 2 1] across them), fixed per pipeline too: the block's
// loops unroll and each of its pixels is converted once, for its luma and for the chroma.
layout(constant_id = 2) const int SUB_X = 2;
layout(constant_id = 3) const int SUB_Y = 2;
layout(constant_id = 4) const int COSITED = 0;

layout(binding = 0) uniform sampler2D processed;     // upright working image
layout(binding = 1) uniform sampler2D reference;     // upright working image as decoded (delta mode)
layout(binding = 2) uniform sampler2D originalLuma;  // stored planes as decoded (delta mode)
layout(binding = 3) uniform sampler2D originalChroma;
layout(binding = 4) uniform sampler2D originalCr;
layout(binding = 5) writeonly uniform image2D lumaOut; // Y, or RGBA for LAYOUT_RGBA
layout(binding = 6) writeonly uniform image2D chromaOut;
layout(binding = 7) writeonly uniform image2D crOut;

layout(push_constant) uniform Parameters {
    ivec2 storedSize;
    ivec2 chromaSize;
    int orientation;
    vec4 range;       // code offsets (luma, chroma) and scales (luma, chroma)
    vec4 toY;         // Y' = dot(toY.xyz, R'G'B'); toY.w = sample scale
    vec4 toPb;
    vec4 toPr;
    ivec2 siteOrigin;  // the dispatch covers sites siteOrigin ... siteOrigin + siteCount - 1
    ivec2 siteCount;
} parameters;

vec3 toYPbPr(vec3 rgb) {
    return vec3(dot(parameters.toY.xyz, rgb), dot(parameters.toPb.xyz, rgb), dot(parameters.toPr.xyz, rgb));
}

vec4 uprightTexel(sampler2D image, ivec2 stored) {
    return texelFetch(image, uprightPixel(stored, parameters.orientation, parameters.storedSize), 0);
}

void main() {
    ivec2 invocation = ivec2(gl_GlobalInvocationID.xy);
    ivec2 site = invocation + parameters.siteOrigin;
    if (any(greaterThanEqual(invocation, parameters.siteCount)) || any(greaterThanEqual(site, parameters.chromaSize))) {
        return;
    }
    bool delta = DELTA_MODE != 0;
    if (LAYOUT_KIND == LAYOUT_RGBA) {
        vec4 value = uprightTexel(processed, site);
        if (delta) {
            value = texelFetch(originalLuma, site, 0) + (value - uprightTexel(reference, site));
        }
        imageStore(lumaOut, site, value);
        return;
    }
    float sampleScale = parameters.toY.w;
    ivec2 origin = site * ivec2(SUB_X, SUB_Y);
    // The block's pixels in Y'PbPr, each converted once (clamped to the frame, as the chroma
    // filter reads them).
    vec3 block[SUB_X * SUB_Y];
    vec3 referenceBlock[SUB_X * SUB_Y];
    for (int j = 0; j < SUB_Y; ++j) {
        for (int i = 0; i < SUB_X; ++i) {
            ivec2 stored = clamp(origin + ivec2(i, j), ivec2(0), parameters.storedSize - 1);
            block[j * SUB_X + i] = toYPbPr(uprightTexel(processed, stored).rgb);
            referenceBlock[j * SUB_X + i] = delta ? toYPbPr(uprightTexel(reference, stored).rgb) : vec3(0.0);
        }
    }
    // Luma of the block.
    for (int j = 0; j < SUB_Y; ++j) {
        for (int i = 0; i < SUB_X; ++i) {
            ivec2 stored = origin + ivec2(i, j);
            if (any(greaterThanEqual(stored, parameters.storedSize))) {
                continue;
            }
            float code = block[j * SUB_X + i].x / parameters.range.z + parameters.range.x;
            if (delta) {
                float referenceCode = referenceBlock[j * SUB_X + i].x / parameters.range.z + parameters.range.x;
                code = texelFetch(originalLuma, stored, 0).r * sampleScale + (code - referenceCode);
            }
            imageStore(lumaOut, stored, vec4(code / sampleScale));
        }
    }
    if (LAYOUT_KIND == LAYOUT_GRAY) {
        return;
    }
    // Chroma: a weighted average over the block ([1 2 1] across columns when co-sited: the
    // column left of the block is converted here).
    vec2 sum = vec2(0.0);
    float weightSum = 0.0;
    bool cosited = COSITED != 0 && SUB_X == 2;
    int firstColumn = cosited ? -1 : 0;
    int lastColumn = cosited ? 1 : SUB_X - 1;
    for (int j = 0; j < SUB_Y; ++j) {
        for (int i = firstColumn; i <= lastColumn; ++i) {
            vec2 pbpr;
            if (i < 0) {
                ivec2 stored = clamp(origin + ivec2(i, j), ivec2(0), parameters.storedSize - 1);
                pbpr = toYPbPr(uprightTexel(processed, stored).rgb).yz;
                if (delta) {
                    pbpr -= toYPbPr(uprightTexel(reference, stored).rgb).yz;
                }
            } else {
                pbpr = block[j * SUB_X + i].yz;
                if (delta) {
                    pbpr -= referenceBlock[j * SUB_X + i].yz;
                }
            }
            float weight = (cosited && i == 0) ? 2.0 : 1.0;
            sum += weight * pbpr;
            weightSum += weight;
        }
    }
    vec2 codes = sum / weightSum / parameters.range.w + (delta ? vec2(0.0) : vec2(parameters.range.y));
    if (delta) {
        vec2 original = LAYOUT_KIND == LAYOUT_SEMI_PLANAR
            ? texelFetch(originalChroma, site, 0).rg
            : vec2(texelFetch(originalChroma, site, 0).r, texelFetch(originalCr, site, 0).r);
        codes += original * sampleScale;
    }
    if (LAYOUT_KIND == LAYOUT_SEMI_PLANAR) {
        imageStore(chromaOut, site, vec4(codes / sampleScale, 0.0, 0.0));
    } else {
        imageStore(chromaOut, site, vec4(codes.x / sampleScale));
        imageStore(crOut, site, vec4(codes.y / sampleScale));
    }
}
