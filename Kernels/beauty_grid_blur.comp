#version 450
#extension GL_GOOGLE_include_directive : enable
// Bilateral grid, one axis of the separable Gaussian blur in grid space (x, y or range).
// Cells outside the grid count as empty (zero weight), which the final division by the
// accumulated weight turns into a correct border.
#include "beauty_grid_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

layout(binding = 0) uniform sampler2D source;   // nearest sampler
layout(binding = 1) writeonly uniform image2D destination;

void main() {
    int k = int(gl_GlobalInvocationID.x);
    int j = int(gl_GlobalInvocationID.y);
    if (k >= grid.bins * grid.gridSize.x || j >= grid.gridSize.y) {
        return;
    }
    int bin = k / grid.gridSize.x;
    int i = k - bin * grid.gridSize.x;
    vec4 sum = vec4(0.0);
    for (int d = -grid.radius; d <= grid.radius; ++d) {
        float w = exp(float(d * d) * grid.blurFactor);
        ivec2 at;
        if (grid.axis == 0) {
            if (i + d < 0 || i + d >= grid.gridSize.x) continue;
            at = ivec2(k + d, j);
        } else if (grid.axis == 1) {
            if (j + d < 0 || j + d >= grid.gridSize.y) continue;
            at = ivec2(k, j + d);
        } else {
            if (bin + d < 0 || bin + d >= grid.bins) continue;
            at = ivec2(k + d * grid.gridSize.x, j);
        }
        sum += w * texelFetch(source, at, 0);
    }
    imageStore(destination, ivec2(k, j), sum);
}
