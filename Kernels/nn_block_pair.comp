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
// epilogue. Outside the image y is zero (SAME padding of the second depthwise).
#include "nn_common.glsl"

const int THREADS = 256;
layout(local_size_x = 256) in;
layout(constant_id = 0) const int KA = 3; // first depthwise kernel
layout(constant_id = 1) const int KB = 3; // second depthwise kernel (stride 1)
layout(constant_id = 2) const int T = 8;  // tile side
const int STORE = 1920;                   // vec4s: first depthwise output, y, second depthwise output

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

shared vec4 store[STORE];

vec4 act(vec4 v, int kind, int alphaOffset, int c4) {
    return kind == ACT_NONE ? v : activate(v, kind, kind == ACT_PRELU ? constants[alphaOffset + c4] : vec4(0.0));
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
    for (int e = t; e < R * p.bC4; e += THREADS) {
        int o = e / R;
        int r = e - o * R;
        int yy = ry0 + r / RS, yx = rx0 + r % RS;
        vec4 sum = constants[p.pwABias + o];
        int w = p.pwA + o * p.aC4 * 4;
        for (int g = 0; g < p.aC4; ++g) {
            vec4 v = store[midA + g * R + r];
            sum += v.x * constants[w + g * 4] + v.y * constants[w + g * 4 + 1]
                 + v.z * constants[w + g * 4 + 2] + v.w * constants[w + g * 4 + 3];
        }
        bool inside = yy >= 0 && yy < p.yH && yx >= 0 && yx < p.yW;
        store[ys + o * R + r] = inside ? act(sum, p.pwAAct, p.pwAAlpha, o) : vec4(0.0);
    }
    barrier();

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
    for (int e = t; e < T * T * p.cC4; e += THREADS) {
        int c = e / (T * T);
        int q = e - c * T * T;
        int zy = ty0 + q / T, zx = tx0 + q % T;
        if (zy >= p.yH || zx >= p.yW) {
            continue;
        }
        vec4 sum = vec4(0.0);
        int w = p.pwB + c * p.bC4 * 4;
        for (int o = 0; o < p.bC4; ++o) {
            vec4 v = store[midB + o * T * T + q];
            sum += v.x * constants[w + o * 4] + v.y * constants[w + o * 4 + 1]
                 + v.z * constants[w + o * 4 + 2] + v.w * constants[w + o * 4 + 3];
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
}
