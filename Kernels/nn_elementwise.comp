#version 450
// Elementwise ops on channel-packed NHWC4 tensors: out = act(a OP b [+ addend]) with OP none
// (a plain activation), ADD or MUL. b is either a tensor of a's shape (possibly with
// fewer channels: a fused channel PAD, the missing channels read as zero) or one
// [1,1,1,C] vector broadcast over every pixel.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer InputA { vec4 aData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer InputB { vec4 bData[]; };
layout(binding = 4) readonly buffer Addend { vec4 addendData[]; };

const int OP_NONE = 0;
const int OP_ADD = 1;
const int OP_MUL = 2;

layout(push_constant) uniform Parameters {
    int aOffset, outOffset, bOffset;
    int pixels, c4Count, channels;
    int op;
    int bBroadcast; // 1: b is one vec4 row of c4Count groups shared by all pixels
    int bC4;        // b's channel groups per pixel (<= c4Count)
    int act, alphaOffset;
    int addendOffset, hasAddend; // a fused ADD after the op: + addend (same shape as out)
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.pixels * p.c4Count) {
        return;
    }
    int c4 = index % p.c4Count;
    int pixel = index / p.c4Count;
    vec4 v = aData[p.aOffset + index];
    if (p.op != OP_NONE) {
        vec4 b = vec4(0.0);
        if (p.bBroadcast != 0) {
            b = bData[p.bOffset + c4];
        } else if (c4 < p.bC4) {
            b = bData[p.bOffset + pixel * p.bC4 + c4];
        }
        v = p.op == OP_ADD ? v + b : v * b;
    }
    if (p.hasAddend != 0) {
        v += addendData[p.addendOffset + index];
    }
    v = activate(v, p.act, p.act == ACT_PRELU ? constants[p.alphaOffset + c4] : vec4(0.0));
    outData[p.outOffset + index] = maskChannels(v, c4, p.channels);
}
