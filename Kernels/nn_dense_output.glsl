// Writes a result straight to a graph output's dense buffer (#include after the kernel
// declares `outScalars`): channel group `c4` of pixel (oy, ox) of a tensor with
// `channels` channels, through the DEPTH_TO_SPACE of `block` (1: none) that feeds the
// output, as nn_unpack.comp computes it: channel c goes to sub-pixel c / denseC of the
// block, channel c % denseC of a dense [.., denseW, denseC] tensor.
void storeDense(vec4 v, int oy, int ox, int c4, int channels, int block, int denseC, int denseW) {
    for (int lane = 0; lane < 4 && 4 * c4 + lane < channels; ++lane) {
        int c = 4 * c4 + lane;
        int sub = c / denseC;
        int y = oy * block + sub / block;
        int x = ox * block + sub % block;
        outScalars[(y * denseW + x) * denseC + c - sub * denseC] = v[lane];
    }
}
