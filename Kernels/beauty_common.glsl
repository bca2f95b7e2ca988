// Helpers shared by the beauty_* kernels.

// BT.709 luma of non-linear (gamma-encoded) RGB, the Y' the quality metrics use.
float beautyLuma(vec3 rgb) {
    return dot(rgb, vec3(0.2126, 0.7152, 0.0722));
}

// `original` moved towards `filtered`: the luma change in full, the rest (colour) scaled by
// `chroma`, so smoothing evens out tone while the skin keeps its regional colour.
vec3 beautyScaleChroma(vec3 original, vec3 filtered, float chroma) {
    vec3 change = filtered - original;
    vec3 lumaChange = vec3(beautyLuma(change));
    return original + lumaChange + chroma * (change - lumaChange);
}

// True when `pixel` lies in the region of interest [origin, origin + size).
bool beautyInRegion(ivec2 pixel, ivec2 origin, ivec2 size) {
    return all(greaterThanEqual(pixel, origin)) && all(lessThan(pixel, origin + size));
}
