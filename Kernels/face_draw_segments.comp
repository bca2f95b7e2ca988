#version 450
// Draws line segments (mesh points are zero-length segments) into an image: one
// invocation per segment walks it one pixel step at a time and stamps a square dot of
// the given radius. Overlapping stamps of one colour make races harmless.

layout(local_size_x = 64) in;

struct Segment {
    vec4 ends;    // x0 y0 x1 y1, frame pixels (continuous, top-left origin)
    vec4 colour;  // rgb, radius in w (pixels)
};

layout(binding = 0) readonly buffer Segments { Segment segments[]; };
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;   // image W, H
    int count;
} p;

void main() {
    int index = int(gl_GlobalInvocationID.x);
    if (index >= p.count) {
        return;
    }
    Segment segment = segments[index];
    vec2 start = segment.ends.xy, end = segment.ends.zw;
    int radius = int(segment.colour.w);
    int steps = int(ceil(max(abs(end.x - start.x), abs(end.y - start.y))));
    steps = min(steps, 4096);
    for (int step = 0; step <= steps; ++step) {
        vec2 position = mix(start, end, steps == 0 ? 0.0 : float(step) / float(steps));
        ivec2 centre = ivec2(floor(position));
        for (int dy = -radius; dy <= radius; ++dy) {
            for (int dx = -radius; dx <= radius; ++dx) {
                ivec2 pixel = centre + ivec2(dx, dy);
                if (all(greaterThanEqual(pixel, ivec2(0))) && all(lessThan(pixel, p.size))) {
                    imageStore(destination, pixel, vec4(segment.colour.rgb, 1.0));
                }
            }
        }
    }
}
