// The per-face measuring discs shared by the strength fit's kernels (StrengthFit.swift):
// each face has three discs (cheeks: mesh points 50 and 280; forehead: 151) of radius
// 0.12 IOD, sampled on a patch of FIT_PATCH x FIT_PATCH samples at a pitch of
// max(1 px, 0.01 IOD), so the metric bands (sigma 0.01 and 0.06 IOD) span the same
// number of samples on any face. Patch (face f, disc k) sits at atlas (k, f) x FIT_PATCH.
// Face parameters (the including kernel declares `readonly uniform imageBuffer paramTexels`),
// FIT_STRIDE floats each: disc centres x y (3), disc radius px, pitch px,
// fine sigma and middle sigma in samples, patch half-side px, samples per side, target
// mid-band ratio, largest gain, the blend's fade-in distance from the frame's edge px.

const int FIT_PATCH = 64;
const int FIT_STRIDE = 16;
const int FIT_DISCS = 3;

// Parameter `index` of `face`, from the parameters bound as RGBA32F texels (`paramTexels`:
// lavapipe fetches a texel in one gather, loads a storage buffer lane by lane).
float fitParameter(int face, int index) {
    return imageLoad(paramTexels, face * (FIT_STRIDE / 4) + (index >> 2))[index & 3];
}

vec2 fitDiscCentre(int face, int disc) {
    return vec2(fitParameter(face, 2 * disc), fitParameter(face, 2 * disc + 1));
}
float fitRadius(int face) { return fitParameter(face, 6); }
float fitPitch(int face) { return fitParameter(face, 7); }
float fitFineSigma(int face) { return fitParameter(face, 8); }
float fitMiddleSigma(int face) { return fitParameter(face, 9); }
float fitHalfSide(int face) { return fitParameter(face, 10); }
int fitSamples(int face) { return int(fitParameter(face, 11)); }
float fitTarget(int face) { return fitParameter(face, 12); }
float fitMaxGain(int face) { return fitParameter(face, 13); }
float fitEdgeReach(int face) { return fitParameter(face, 14); }

// Frame position (px) of sample (i, j) of a face's disc patch: pixel centres when the
// pitch is 1, so the sums are the metric's own.
vec2 fitSamplePosition(int face, int disc, ivec2 ij) {
    vec2 origin = floor(fitDiscCentre(face, disc) - fitHalfSide(face));
    return origin + (vec2(ij) + 0.5) * fitPitch(face);
}
