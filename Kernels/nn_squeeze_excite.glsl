// A squeeze-and-excite head in one launch: the mean of a [H, W, C] tensor over its pixels
// (or of the sum of two such tensors: a fused ADD), then up to two dense layers on that
// vector (1x1 convolutions of a 1x1 tensor, each with bias and activation):
//   out = act2(fc2(act1(fc1(mean(in [+ addend])))))
// Apart, these are three launches, and the mean alone is slow: one workgroup per channel
// group walks every pixel. Here every workgroup sums a band of pixels into `partials`; the
// last one to finish (an atomic count, nobody waits) adds the bands and runs the dense
// layers, then resets the count for the next launch. The input, addend and constants are
// storage buffers (nn_squeeze_excite.comp) or texel buffers (nn_squeeze_excite_texels.comp,
// for lavapipe, which loads a storage buffer lane by lane).
#include "nn_common.glsl"

const int THREADS = 256;
layout(local_size_x = 256) in;
const int MAX_GROUPS = 256; // channel groups of the input and of each layer's output

#ifdef TEXEL_READS
layout(binding = 0, rgba32f) readonly uniform imageBuffer inTexels;
layout(binding = 2, rgba32f) readonly uniform imageBuffer constantTexels;
layout(binding = 4, rgba32f) readonly uniform imageBuffer addendTexels;
#define ADDEND_AT(i) imageLoad(addendTexels, (i))
#else
layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 4) readonly buffer Addend { vec4 addendData[]; };
#define ADDEND_AT(i) addendData[i]
#endif
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 3) coherent buffer Scratch { uint finished; uint pad0, pad1, pad2; vec4 partials[]; } scratch;

layout(push_constant) uniform Parameters {
    int inOffset, outOffset, pixels, inC4;
    int addendOffset, hasAddend;                      // the mean is of in + addend (a fused ADD)
    int pixelsPerGroup, layers;                       // layers: 0, 1 or 2
    int weight1, bias1, out1C4, out1C, act1, alpha1;
    int weight2, bias2, out2C4, out2C, act2, alpha2;
} p;

shared vec4 sums[THREADS];
shared vec4 vector[2][MAX_GROUPS];
shared bool isLast;

// One dense layer, `from` (inC4 groups) -> `to` (outC4 groups), in shared memory. Each
// output group's sum is shared by K invocations (as many as the workgroup allows), which
// meet in `sums`: the layer takes a few loads' latency rather than inC4 of them.
void dense(int from, int to, int inC4, int outC4, int outC, int weight, int bias, int act, int alpha) {
    int t = int(gl_LocalInvocationID.x);
    int k = 1;
    while (k * 2 * outC4 <= THREADS) {
        k *= 2;
    }
    int slot = t / k;
    int slice = t - slot * k;
    int perRound = THREADS / k;
    for (int round = 0; round * perRound < outC4; ++round) {
        int o = round * perRound + slot;
        vec4 acc = vec4(0.0);
        if (o < outC4) {
            int w = weight + o * inC4 * 4;
            for (int i = slice; i < inC4; i += k) {
                vec4 v = vector[from][i];
                acc += v.x * CONST_AT(w + i * 4) + v.y * CONST_AT(w + i * 4 + 1)
                     + v.z * CONST_AT(w + i * 4 + 2) + v.w * CONST_AT(w + i * 4 + 3);
            }
        }
        sums[t] = acc;
        barrier();
        for (int stride = k / 2; stride > 0; stride /= 2) {
            if (slice < stride) {
                sums[t] += sums[t + stride];
            }
            barrier();
        }
        if (slice == 0 && o < outC4) {
            vec4 v = sums[t] + CONST_AT(bias + o);
            v = activate(v, act, act == ACT_PRELU ? CONST_AT(alpha + o) : vec4(0.0));
            vector[to][o] = maskChannels(v, o, outC);
        }
        barrier();
    }
}

// Sums each channel group's `rows` values (invocation row * inC4 + c holds row `row` of
// group c) in a tree; the totals end in sums[0, inC4).
void sumRows(vec4 value, int rows) {
    int t = int(gl_LocalInvocationID.x);
    sums[t] = value;
    barrier();
    for (int stride = rows / 2; stride > 0; stride /= 2) {
        if (t < stride * p.inC4) {
            sums[t] += sums[t + stride * p.inC4];
        }
        barrier();
    }
}

void main() {
    int t = int(gl_LocalInvocationID.x);
    int group = int(gl_WorkGroupID.x);
    int lanes = 1; // pixels summed side by side: a power of two, lanes * inC4 <= THREADS
    while (lanes * 2 * p.inC4 <= THREADS) {
        lanes *= 2;
    }
    int lane = t / p.inC4;
    int c4 = t - lane * p.inC4;

    // This workgroup's band of pixels, `lanes` pixels at a time.
    vec4 sum = vec4(0.0);
    if (lane < lanes) {
        int end = min((group + 1) * p.pixelsPerGroup, p.pixels);
        for (int pixel = group * p.pixelsPerGroup + lane; pixel < end; pixel += lanes) {
            vec4 addend = ADDEND_AT(p.addendOffset + pixel * p.inC4 + c4); // bound to `in` when unused
            sum += IN_AT(p.inOffset + pixel * p.inC4 + c4) + (p.hasAddend != 0 ? addend : vec4(0.0));
        }
    }
    sumRows(sum, lanes);
    if (t < p.inC4) {
        scratch.partials[group * p.inC4 + t] = sums[t];
    }
    memoryBarrierBuffer();
    barrier();
    if (t == 0) {
        isLast = atomicAdd(scratch.finished, 1u) == gl_NumWorkGroups.x - 1u;
    }
    barrier();
    if (!isLast) {
        return;
    }

    // The last workgroup adds the bands, `lanes` of them side by side.
    memoryBarrierBuffer();
    vec4 total = vec4(0.0);
    if (lane < lanes) {
        for (int band = lane; band < int(gl_NumWorkGroups.x); band += lanes) {
            total += scratch.partials[band * p.inC4 + c4];
        }
    }
    sumRows(total, lanes);
    if (t < p.inC4) {
        vector[0][t] = sums[t] / float(p.pixels);
    }
    if (t == 0) {
        scratch.finished = 0u;
    }
    barrier();
    int result = 0, resultC4 = p.inC4;
    if (p.layers >= 1) {
        dense(0, 1, p.inC4, p.out1C4, p.out1C, p.weight1, p.bias1, p.act1, p.alpha1);
        result = 1;
        resultC4 = p.out1C4;
    }
    if (p.layers >= 2) {
        dense(1, 0, p.out1C4, p.out2C4, p.out2C, p.weight2, p.bias2, p.act2, p.alpha2);
        result = 0;
        resultC4 = p.out2C4;
    }
    for (int o = t; o < resultC4; o += THREADS) {
        outData[p.outOffset + o] = vector[result][o];
    }
}
