#version 450
// A 1x1 CONV_2D and the DEPTHWISE_CONV_2D reading its output, in one launch (the
// full-range detector's heads):
//   mid = act(conv1x1(in) + bias)              (kept in shared memory)
//   out = dwAct(dwconv(mid) + dwBias)
// A workgroup owns a T x T tile of the output and `groupsPerTile` of its channel groups.
// It stages those groups' 1x1 weights, computes the 1x1 output for them on the region the
// tile's taps read (recomputing what overlaps its neighbours' regions; zero outside the
// image, the depthwise's SAME padding), then the depthwise on the tile. With
// DENSE_BLOCK > 0 the result goes straight to a graph output's dense buffer.
#include "nn_common.glsl"

const int THREADS = 256;
layout(local_size_x = 256) in;
layout(constant_id = 0) const int K = 3;      // depthwise kernel side
layout(constant_id = 1) const int STRIDE = 1; // depthwise stride
layout(constant_id = 2) const int T = 4;      // tile side
layout(constant_id = 3) const int DENSE_BLOCK = 0;
const int STORE = 1792; // vec4s: the staged weights, then the 1x1 output on the region

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) writeonly buffer DenseOutput { float outScalars[]; }; // DENSE_BLOCK > 0 only

// Tensors are bound as exact ranges, so they start at 0.
layout(push_constant) uniform Parameters {
    int inH, inW, inC4, midC4, outH, outW, outC, groupsPerTile;
    int pw, pwBias, pwAct, pwAlpha;
    int dw, dwBias, dwAct, dwAlpha, padTop, padLeft;
    int denseC, denseW; // DENSE_BLOCK > 0: channels and width of the dense output
} p;

#include "nn_dense_output.glsl"
#include "nn_channel_activation.glsl"

shared vec4 store[STORE];

void main() {
    int t = int(gl_LocalInvocationID.x);
    int tilesX = (p.outW + T - 1) / T;
    int tiles = tilesX * ((p.outH + T - 1) / T);
    int workgroup = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int tile = workgroup % tiles;
    int firstGroup = (workgroup / tiles) * p.groupsPerTile;
    int ty0 = (tile / tilesX) * T;
    int tx0 = (tile % tilesX) * T;
    const int RS = (T - 1) * STRIDE + K; // side of the region the tile's taps read
    const int R = RS * RS;
    int ry0 = ty0 * STRIDE - p.padTop;
    int rx0 = tx0 * STRIDE - p.padLeft;
    int weightCount = p.groupsPerTile * p.inC4 * 4;
    int mid = weightCount; // the 1x1 output in `store`, [group][region pixel]

    // 1. Stage this workgroup's 1x1 weights (past the last group: zeros).
    int firstWeight = p.pw + firstGroup * p.inC4 * 4;
    int lastWeight = p.pw + p.midC4 * p.inC4 * 4;
    for (int i = t; i < weightCount; i += THREADS) {
        store[i] = firstWeight + i < lastWeight ? constants[firstWeight + i] : vec4(0.0);
    }
    barrier();

    // 2. The 1x1 on the region (neighbouring invocations: neighbouring pixels of a group).
    for (int e = t; e < R * p.groupsPerTile; e += THREADS) {
        int g = e / R;
        int r = e - g * R;
        int yy = ry0 + r / RS, xx = rx0 + r % RS;
        bool inside = yy >= 0 && yy < p.inH && xx >= 0 && xx < p.inW && firstGroup + g < p.midC4;
        int base = (clamp(yy, 0, p.inH - 1) * p.inW + clamp(xx, 0, p.inW - 1)) * p.inC4;
        vec4 sum = vec4(0.0);
        int w = g * p.inC4 * 4;
        for (int ic = 0; ic < p.inC4; ++ic) {
            vec4 v = inData[base + ic];
            sum += v.x * store[w + ic * 4] + v.y * store[w + ic * 4 + 1] + v.z * store[w + ic * 4 + 2] + v.w * store[w + ic * 4 + 3];
        }
        int c4 = min(firstGroup + g, p.midC4 - 1);
        store[mid + e] = inside ? act(sum + constants[p.pwBias + c4], p.pwAct, p.pwAlpha, c4) : vec4(0.0);
    }
    barrier();

    // 3. The depthwise on the tile.
    for (int e = t; e < T * T * p.groupsPerTile; e += THREADS) {
        int g = e / (T * T);
        int q = e - g * T * T;
        int qy = q / T, qx = q % T;
        int oy = ty0 + qy, ox = tx0 + qx;
        int c4 = firstGroup + g;
        if (oy >= p.outH || ox >= p.outW || c4 >= p.midC4) {
            continue;
        }
        vec4 acc = vec4(0.0);
        for (int ky = 0; ky < K; ++ky) {
            for (int kx = 0; kx < K; ++kx) {
                acc += store[mid + g * R + (qy * STRIDE + ky) * RS + qx * STRIDE + kx] * constants[p.dw + (ky * K + kx) * p.midC4 + c4];
            }
        }
        vec4 v = act(acc + constants[p.dwBias + c4], p.dwAct, p.dwAlpha, c4);
        if (DENSE_BLOCK == 0) {
            outData[(oy * p.outW + ox) * p.midC4 + c4] = maskChannels(v, c4, p.outC);
        } else {
            storeDense(v, oy, ox, c4, p.outC, DENSE_BLOCK, p.denseC, p.denseW);
        }
    }
}
