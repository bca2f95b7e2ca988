#version 450
// One view of a detection pass: BlazeFace's raw outputs decoded against the anchors and
// appended, in frame pixels, to the pass's candidate list (DetectionDecoder.candidates is
// the CPU reference). One invocation per anchor; a candidate is kept when its score reaches
// the threshold and its box stays clear of the view's cut edges (a tile edge inside the
// frame: an overlapping tile sees that face whole). `count` keeps counting past `capacity`.
// Record: score, box low (x, y), box high (x, y), 6 keypoints (x, y).
#include "face_detection_common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Regressors { float regressors[]; };  // anchors x 16
layout(std430, binding = 1) readonly buffer Logits { float logits[]; };          // anchors
layout(std430, binding = 2) readonly buffer Anchors { vec2 anchors[]; };
layout(std430, binding = 3) buffer Candidates {
    uint count;
    uint capacity;
    uint padding0;
    uint padding1;
    float records[];
};

layout(push_constant) uniform Parameters {
    vec2 centre;           // the view's square, frame pixels
    vec2 axisX;            // frame displacement of one unit along the square's x
    vec2 axisY;            // ... and y (quarter turns: the box's corners stay a box)
    uint anchorCount;
    uint regressorBase;    // first float of the outputs in their buffers
    uint logitBase;
    float inputSize;       // the model's input side, px
    float scoreThreshold;
    uint cutEdges;         // bits: 1 left, 2 top, 4 right, 8 bottom
} parameters;

const float CUT_MARGIN = 0.01;

vec2 framePoint(vec2 unit) {
    vec2 d = unit - 0.5;
    return parameters.centre + parameters.axisX * d.x + parameters.axisY * d.y;
}

void main() {
    uint anchor = gl_GlobalInvocationID.x;
    if (anchor >= parameters.anchorCount) return;
    float logit = clamp(logits[parameters.logitBase + anchor], -100.0, 100.0);
    float score = 1.0 / (1.0 + exp(-logit));
    if (score < parameters.scoreThreshold) return;
    uint r = parameters.regressorBase + anchor * 16u;
    float scale = parameters.inputSize;
    vec2 centre = vec2(regressors[r], regressors[r + 1u]) / scale + anchors[anchor];
    vec2 size = vec2(regressors[r + 2u], regressors[r + 3u]) / scale;
    vec2 low = centre - size / 2.0, high = centre + size / 2.0;
    uint cut = parameters.cutEdges;
    if (((cut & 1u) != 0u && low.x < CUT_MARGIN) || ((cut & 2u) != 0u && low.y < CUT_MARGIN)
        || ((cut & 4u) != 0u && high.x > 1.0 - CUT_MARGIN) || ((cut & 8u) != 0u && high.y > 1.0 - CUT_MARGIN)) return;
    vec2 a = framePoint(low), b = framePoint(high), c = framePoint(vec2(low.x, high.y)), d = framePoint(vec2(high.x, low.y));
    uint slot = atomicAdd(count, 1u);
    if (slot >= capacity) return;
    uint base = slot * DETECTION_RECORD;
    records[base] = score;
    vec2 boxLow = min(min(a, b), min(c, d)), boxHigh = max(max(a, b), max(c, d));
    records[base + 1u] = boxLow.x;
    records[base + 2u] = boxLow.y;
    records[base + 3u] = boxHigh.x;
    records[base + 4u] = boxHigh.y;
    for (uint k = 0u; k < 6u; ++k) {
        vec2 p = framePoint(vec2(regressors[r + 4u + 2u * k], regressors[r + 5u + 2u * k]) / scale + anchors[anchor]);
        records[base + 5u + 2u * k] = p.x;
        records[base + 6u + 2u * k] = p.y;
    }
}
