// Elementwise ops on channel-packed NHWC4 tensors: out = act(a OP b [+ addend]) with OP none
// (a plain activation), ADD or MUL. b is either a tensor of a's shape (possibly with
// fewer channels: a fused channel PAD, the missing channels read as zero) or one
// [1,1,1,C] vector broadcast over every pixel. Storage buffers and push constants
// (nn_elementwise.comp), or texel buffers with the op, broadcast, addend and activation
// fixed at compile time (nn_elementwise_texels.comp: lavapipe loads a storage buffer lane by
// lane and runs both sides of every branch).
#include "nn_common.glsl"

layout(local_size_x = 64) in;

const int OP_NONE = 0;
const int OP_ADD = 1;
const int OP_MUL = 2;

#ifdef TEXEL_READS
layout(binding = 0, rgba32f) readonly uniform imageBuffer aTexels;
layout(binding = 2, rgba32f) readonly uniform imageBuffer constantTexels;
layout(binding = 3, rgba32f) readonly uniform imageBuffer bTexels;
layout(binding = 4, rgba32f) readonly uniform imageBuffer addendTexels;
layout(constant_id = 0) const int OP = OP_NONE;
layout(constant_id = 1) const int B_BROADCAST = 0;
layout(constant_id = 2) const int HAS_ADDEND = 0;
layout(constant_id = 3) const int ACT = ACT_NONE;
#define A_AT(i) imageLoad(aTexels, (i))
#define B_AT(i) imageLoad(bTexels, (i))
#define ADDEND_AT(i) imageLoad(addendTexels, (i))
#else
layout(binding = 0) readonly buffer InputA { vec4 aData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer InputB { vec4 bData[]; };
layout(binding = 4) readonly buffer Addend { vec4 addendData[]; };
#define A_AT(i) aData[i]
#define B_AT(i) bData[i]
#define ADDEND_AT(i) addendData[i]
#define OP p.op
#define B_BROADCAST p.bBroadcast
#define HAS_ADDEND p.hasAddend
#define ACT p.act
#endif
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

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
    vec4 v = A_AT(p.aOffset + index);
    if (OP != OP_NONE) {
        vec4 b = vec4(0.0);
        if (B_BROADCAST != 0) {
            b = B_AT(p.bOffset + c4);
        } else if (c4 < p.bC4) {
            b = B_AT(p.bOffset + pixel * p.bC4 + c4);
        }
        v = OP == OP_ADD ? v + b : v * b;
    }
    if (HAS_ADDEND != 0) {
        v += ADDEND_AT(p.addendOffset + index);
    }
    v = activate(v, ACT, ACT == ACT_PRELU ? CONST_AT(p.alphaOffset + c4) : vec4(0.0));
    outData[p.outOffset + index] = maskChannels(v, c4, p.channels);
}
