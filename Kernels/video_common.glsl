// Shared by the colour-conversion kernels (yuv_to_rgb.comp, rgb_to_yuv.comp).

// Plane layouts of a decoded frame (VideoPlaneLayout in Swift).
const int LAYOUT_PLANAR = 0;      // Y, U, V planes
const int LAYOUT_SEMI_PLANAR = 1; // Y plane + interleaved UV plane (NV12, P010)
const int LAYOUT_GRAY = 2;        // Y only
const int LAYOUT_RGBA = 3;        // one packed RGBA plane

// Maps a pixel of the upright (display) image to the stored frame. `orientation` is one
// of the 8 rotations/mirrors (Orientation in Swift): bit 0 mirrors x of the stored frame,
// bits 1-2 count clockwise quarter turns applied for display.
ivec2 storedPixel(ivec2 upright, int orientation, ivec2 storedSize) {
    int turns = (orientation >> 1) & 3;
    ivec2 p = upright;
    // Undo the display rotation: the upright image is the stored one turned `turns` times clockwise.
    if (turns == 1) {
        p = ivec2(p.y, storedSize.y - 1 - p.x);
    } else if (turns == 2) {
        p = ivec2(storedSize.x - 1 - p.x, storedSize.y - 1 - p.y);
    } else if (turns == 3) {
        p = ivec2(storedSize.x - 1 - p.y, p.x);
    }
    if ((orientation & 1) != 0) {
        p.x = storedSize.x - 1 - p.x;
    }
    return p;
}

// The inverse of storedPixel: where a stored pixel appears in the upright image.
ivec2 uprightPixel(ivec2 stored, int orientation, ivec2 storedSize) {
    ivec2 p = stored;
    if ((orientation & 1) != 0) {
        p.x = storedSize.x - 1 - p.x;
    }
    int turns = (orientation >> 1) & 3;
    if (turns == 1) {
        p = ivec2(storedSize.y - 1 - p.y, p.x);
    } else if (turns == 2) {
        p = ivec2(storedSize.x - 1 - p.x, storedSize.y - 1 - p.y);
    } else if (turns == 3) {
        p = ivec2(p.y, storedSize.x - 1 - p.x);
    }
    return p;
}
