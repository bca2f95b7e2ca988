// Shared helpers for Velvet kernels. Included with #include "common.glsl";
// KernelCompiler expands includes itself and lists this file as an input of every kernel.

// Index along one axis with the border replicated (clamp to edge).
int clampIndex(int index, int length) {
    return clamp(index, 0, length - 1);
}

// Pixel position for a 1D pass: `along` the filter axis, `across` it.
ivec2 axisPixel(int along, int across, bool vertical) {
    return vertical ? ivec2(across, along) : ivec2(along, across);
}
