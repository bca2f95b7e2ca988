#version 450
// Two depthwise+1x1 blocks in one launch, where the first block's output feeds only the
// second (the detectors' bottleneck pairs):
//   y = actA'(pwA(actA(dwA(x))))                        (kept in shared memory)
//   z = act2(act1(pwB(actB(dwB(y))) + bias) + residual)
// The second depthwise needs y around each output pixel, so a workgroup owns a T x T tile
// of z and computes y on the tile grown by the depthwise's reach (a halo recomputed by
// its neighbours too): a launch and a barrier fewer for a little repeated work.
// Phases, each over the whole workgroup, with a barrier between: the first depthwise on
// the grown region, its 1x1, the second depthwise on the tile, the last 1x1 with its
// epilogue. Outside the image y is zero (SAME padding of the second depthwise). On a GPU
// the workgroups are big (THREADS) so that each phase takes few rounds, with S invocations
// sharing each 1x1 output's sum where the sums are long enough (their partial sums meet in
// the free end of `store`).
#include "nn_common.glsl"

layout(constant_id = 3) const int THREADS = 256; // 256, 512 or 1024
layout(local_size_x_id = 3) in;
layout(constant_id = 0) const int KA = 3; // first depthwise kernel
layout(constant_id = 1) const int KB = 3; // second depthwise kernel (stride 1)
layout(constant_id = 2) const int T = 8;  // tile side
layout(constant_id = 4) const int S = 1;  // invocations sharing each 1x1 output's sum
const int STORE = 1920; // vec4s: first depthwise output, y, second depthwise output, partial sums

layout(binding = 0) readonly buffer Input { vec4 inData[]; };
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };
layout(binding = 2) readonly buffer Constants { vec4 constants[]; };
layout(binding = 3) readonly buffer Residual { vec4 residualData[]; };

// Tensors are bound as exact ranges, so they start at 0.
layout(push_constant) uniform Parameters {
    int inH, inW, aC4, yH, yW, bC4, cC4, outC;
    int dwA, dwABias, dwAAct, dwAAlpha, strideA, padTopA, padLeftA;
    int pwA, pwABias, pwAAct, pwAAlpha;
    int dwB, dwBBias, dwBAct, dwBAlpha, padTopB, padLeftB;
    int pwB, pwBBias, act1, alpha1, act2, alpha2, residualC4; // residualC4 < 0: no residual
} p;

#include "nn_depthwise_taps.glsl"
#include "nn_channel_activation.glsl"

shared vec4 store[STORE];

// y's group `o` at grown-region pixel `r` from its sum: zero outside the image.
vec4 activatedY(vec4 sum, int o, int r, int ry0, int rx0, int RS) {
    int yy = ry0 + r / RS, yx = rx0 + r % RS;
    bool inside = yy >= 0 && yy < p.yH && yx >= 0 && yx < p.yW;
    return inside ? act(sum + constants[p.pwABias + o], p.pwAAct, p.pwAAlpha, o) : vec4(0.0);
}

// Writes z's group `c` at tile pixel `q` from its sum, with the epilogue.
void storeZ(vec4 sum, int c, int q, int ty0, int tx0) {
    int zy = ty0 + q / T, zx = tx0 + q % T;
    if (zy >= p.yH || zx >= p.yW) {
        return;
    }
    int pixel = zy * p.yW + zx;
    vec4 v = act(sum + constants[p.pwBBias + c], p.act1, p.alpha1, c);
    if (p.residualC4 >= 0) {
        if (c < p.residualC4) {
            v += residualData[pixel * p.residualC4 + c];
        }
        v = act(v, p.act2, p.alpha2, c);
    }
    outData[pixel * p.cC4 + c] = maskChannels(v, c, p.outC);
}

void main() {
    int t = int(gl_LocalInvocationID.x);
    int tilesX = (p.yW + T - 1) / T;
    int workgroup = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int ty0 = (workgroup / tilesX) * T;
    int tx0 = (workgroup % tilesX) * T;
    const int RS = T + KB - 1; // side of the grown region
    const int R = RS * RS;
    int ry0 = ty0 - p.padTopB;
    int rx0 = tx0 - p.padLeftB;
    int midA = 0, ys = R * p.aC4, midB = ys + R * p.bC4; // regions of `store`, [group][pixel]
    int partials = midB + T * T * p.bC4;                 // [output][slice], S > 1 only

    // 1. The first depthwise on the grown region (neighbouring invocations: neighbouring groups).
    for (int e = t; e < R * p.aC4; e += THREADS) {
        int r = e / p.aC4;
        int g = e - r * p.aC4;
        int yy = ry0 + r / RS, yx = rx0 + r % RS;
        vec4 acc = depthwiseSum(0, p.inH, p.inW, p.aC4, g, yy * p.strideA - p.padTopA, yx * p.strideA - p.padLeftA,
                                KA, KA, p.dwA);
        store[midA + g * R + r] = act(acc + constants[p.dwABias + g], p.dwAAct, p.dwAAlpha, g);
    }
    barrier();

    // 2. Its 1x1: y on the grown region, zero outside the image.
    for (int e = t; e < R * p.bC4 * S; e += THREADS) {
        int slice = e % S;
        int k = e / S;
        int o = k / R;
        int r = k - o * R;
        vec4 sum = vec4(0.0);
        int w = p.pwA + o * p.aC4 * 4;
        for (int g = slice; g < p.aC4; g += S) {
            vec4 v = store[midA + g * R + r];
            sum += v.x * constants[w + g * 4] + v.y * constants[w + g * 4 + 1]
                 + v.z * constants[w + g * 4 + 2] + v.w * constants[w + g * 4 + 3];
        }
        if (S > 1) {
            store[partials + e] = sum;
        } else {
            store[ys + k] = activatedY(sum, o, r, ry0, rx0, RS);
        }
    }
    barrier();
    if (S > 1) {
        for (int k = t; k < R * p.bC4; k += THREADS) {
            vec4 sum = vec4(0.0);
            for (int slice = 0; slice < S; ++slice) {
                sum += store[partials + k * S + slice];
            }
            int o = k / R;
            store[ys + k] = activatedY(sum, o, k - o * R, ry0, rx0, RS);
        }
        barrier();
    }

    // 3. The second depthwise on the tile.
    for (int e = t; e < T * T * p.bC4; e += THREADS) {
        int o = e / (T * T);
        int q = e - o * T * T;
        int qy = q / T, qx = q % T;
        vec4 acc = vec4(0.0);
        for (int ky = 0; ky < KB; ++ky) {
            for (int kx = 0; kx < KB; ++kx) {
                acc += store[ys + o * R + (qy + ky) * RS + qx + kx] * constants[p.dwB + (ky * KB + kx) * p.bC4 + o];
            }
        }
        store[midB + o * T * T + q] = act(acc + constants[p.dwBBias + o], p.dwBAct, p.dwBAlpha, o);
    }
    barrier();

    // 4. The last 1x1 and its epilogue.
    for (int e = t; e < T * T * p.cC4 * S; e += THREADS) {
        int slice = e % S;
        int k = e / S;
        int c = k / (T * T);
        int q = k - c * T * T;
        vec4 sum = vec4(0.0);
        int w = p.pwB + c * p.bC4 * 4;
        for (int o = slice; o < p.bC4; o += S) {
            vec4 v = store[midB + o * T * T + q];
            sum += v.x * constants[w + o * 4] + v.y * constants[w + o * 4 + 1]
                 + v.z * constants[w + o * 4 + 2] + v.w * constants[w + o * 4 + 3];
        }
        if (S > 1) {
            // Phase 2's partial sums are spent, so this phase's take their place.
            store[partials + e] = sum;
        } else {
            storeZ(sum, c, q, ty0, tx0);
        }
    }
    if (S > 1) {
        barrier();
        for (int k = t; k < T * T * p.cC4; k += THREADS) {
            vec4 sum = vec4(0.0);
            for (int slice = 0; slice < S; ++slice) {
                sum += store[partials + k * S + slice];
            }
            int c = k / (T * T);
            storeZ(sum, c, k - c * T * T, ty0, tx0);
        }
    }
}
