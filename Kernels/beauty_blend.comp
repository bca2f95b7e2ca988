#version 450
#extension GL_GOOGLE_include_directive : enable
// Composite: out = mix(spotFixed, processed, skin x zone x gain x edge) inside the region
// of interest, where gain is the strength fit's per-face gain (beauty_fit_reduce.comp),
// blended across faces by their radial gradients (so overlapping faces with other gains
// meet without a step), and edge fades the smoothing out towards the frame's edge over the
// smoothing's own reach (`edgeReach` face sizes): there the smoothing's window is cut by the
// frame and would pull the skin at the edge towards the inside (a face cut by the frame
// would get a band of the wrong tone along it). A pixel with no blend weight and no spot fill is copied from the
// original texel untouched, so everything the mask does not reach is bit-exact (M3).
// A user's matte (`render --matte-in`), when given, multiplies both the blend weight and the
// spot fill, so where it is 0 the original texel is kept bit-exact.
// With WRITE_WEIGHTS the final weight max(blend, spot fill) is also written (`--matte`, tests).
// With COPY_OUTSIDE it is dispatched over the whole frame and copies the pixels outside the
// region itself (on a GPU one dispatch costs less than a copy and a dispatch); without, it is
// dispatched over the region only, after the host copied the frame to the destination and
// cleared the weights (on a CPU Vulkan, where every invocation runs the whole kernel and the
// copy is a memcpy).
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const int WRITE_WEIGHTS = 0;
layout(constant_id = 1) const int HAS_USER_MATTE = 0;
layout(constant_id = 2) const int COPY_OUTSIDE = 0;

layout(binding = 0) uniform sampler2D original;  // nearest
layout(binding = 1) uniform sampler2D spotFixed; // nearest: rgb fixed, a = spot weight
layout(binding = 2) uniform sampler2D processed; // nearest: smoothed
layout(binding = 3) uniform sampler2D mask;      // linear
layout(binding = 4) writeonly uniform image2D destination;
layout(binding = 5) writeonly uniform image2D weights;
layout(binding = 6, rgba32f) readonly uniform imageBuffer geometryTexels; // the skin mask's faces
layout(binding = 7, rgba32f) readonly uniform imageBuffer gainTexels;     // per face, GAIN_STRIDE floats, gain first
layout(binding = 8) uniform sampler2D userMatte; // nearest, frame size: the user's matte (with HAS_USER_MATTE)
layout(binding = 9) readonly buffer GeometryWords { float data[]; } geometryWords; // the table again, as words (face_table.glsl)

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    ivec2 frameSize;
    vec2 inverseFrame;
    int faceCount;
    float edgeReach;   // face sizes over which the weight fades in from the frame's edge
} parameters;

#define FACE_COUNT parameters.faceCount
#define FACE_TABLE_DIRECT
#include "face_table.glsl"

const int GAIN_STRIDE = 8;

void main() {
    ivec2 dispatchOrigin = COPY_OUTSIDE != 0 ? ivec2(0) : parameters.origin;
    ivec2 pixel = dispatchOrigin + ivec2(gl_GlobalInvocationID.xy);
    vec2 p = vec2(pixel) + 0.5;
    // The faces reaching this workgroup (a uniform test: every lane reads the same face).
    vec2 groupLow = vec2(dispatchOrigin + ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy));
    vec2 groupHigh = groupLow + vec2(gl_WorkGroupSize.xy);
    float gainSum = 0.0;
    float reachSum = 0.0;
    float gainWeight = 0.0;
    float fadeSum = 0.0;
    for (int face = 0; face < parameters.faceCount; ++face) {
        if (!faceBoxMeets(faceBox(face), groupLow, groupHigh)) {
            continue;
        }
        float k = 1.0 - smoothstep(faceValue(face, 2), faceValue(face, 3), distance(p, facePoint(face, 0)));
        // A face the tracker holds after losing it fades out by its weight (header 9):
        // smoothing and spot fills alike, after the strength fit (which would undo it).
        float fade = faceValue(face, 9);
        gainSum += k * imageLoad(gainTexels, face * GAIN_STRIDE / 4).x * fade;
        fadeSum += k * fade;
        reachSum += k * faceValue(face, 7) * parameters.edgeReach;
        gainWeight += k;
    }
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        if (COPY_OUTSIDE != 0 && all(lessThan(pixel, parameters.frameSize))) {
            imageStore(destination, pixel, texelFetch(original, pixel, 0));
            if (WRITE_WEIGHTS != 0) {
                imageStore(weights, pixel, vec4(0.0));
            }
        }
        return;
    }
    vec4 source = texelFetch(original, pixel, 0);
    vec4 result = source;
    vec4 m = texture(mask, (vec2(pixel) + 0.5) * parameters.inverseFrame);
    float gain = gainWeight > 0.0 ? gainSum / gainWeight : 0.0;
    float reach = gainWeight > 0.0 ? reachSum / gainWeight : 0.0;
    float fade = gainWeight > 0.0 ? fadeSum / gainWeight : 1.0;
    float edge = min(min(p.x, p.y), min(float(parameters.frameSize.x) - p.x, float(parameters.frameSize.y) - p.y));
    float weight = clamp(m.r * m.g * gain, 0.0, 1.0) * smoothstep(0.0, max(reach, 1e-3), edge);
    vec4 fixedPixel = texelFetch(spotFixed, pixel, 0);
    // Spot fills exist only where the mask permits them (the spot stage writes its
    // faces' regions only, not all of this one).
    float spot = m.b > 0.0 ? fixedPixel.a * fade : 0.0;
    if (HAS_USER_MATTE != 0) {
        float user = clamp(texelFetch(userMatte, pixel, 0).r, 0.0, 1.0);
        weight *= user;
        spot *= user;
    }
    if (weight > 0.0 || spot > 0.0) {
        vec3 start = spot > 0.0 ? mix(source.rgb, fixedPixel.rgb, fade) : source.rgb;
        result = vec4(mix(start, texelFetch(processed, pixel, 0).rgb, weight), source.a);
    }
    imageStore(destination, pixel, result);
    if (WRITE_WEIGHTS != 0) {
        imageStore(weights, pixel, vec4(max(weight, spot)));
    }
}
