#version 450
#extension GL_GOOGLE_include_directive : enable
// Bilateral grid, splat step 2 of 2: along y. One invocation per grid texel (bin, column,
// cell row) sums the x-splatted rows within one cell of its row with a tent weight.
#include "beauty_grid_common.glsl"

layout(local_size_x = 64, local_size_y = 4) in;

layout(binding = 0) uniform sampler2D rows;     // nearest sampler: output of beauty_grid_splat_x
layout(binding = 1) writeonly uniform image2D destination; // (bins * gridSize.x) x gridSize.y

void main() {
    int k = int(gl_GlobalInvocationID.x);
    int cellRow = int(gl_GlobalInvocationID.y);
    if (k >= grid.bins * grid.gridSize.x || cellRow >= grid.gridSize.y) {
        return;
    }
    float centre = float(cellRow) * grid.cell;
    int first = max(0, int(ceil(centre - grid.cell)));
    int last = min(grid.size.y - 1, int(floor(centre + grid.cell)));
    vec4 sum = vec4(0.0);
    for (int y = first; y <= last; ++y) {
        sum += texelFetch(rows, ivec2(k, y), 0) * (1.0 - abs(float(y) - centre) / grid.cell);
    }
    imageStore(destination, ivec2(k, cellRow), sum);
}
