#version 450
// One axis of a box mean (radius `radius` samples, the box's weights all equal; samples
// past the image's edge count as zero, which a normalised convolution's sums allow).
layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source; // nearest
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;
    int vertical;
    int radius;
} parameters;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    ivec2 step = parameters.vertical != 0 ? ivec2(0, 1) : ivec2(1, 0);
    vec4 sum = vec4(0.0);
    for (int d = -parameters.radius; d <= parameters.radius; ++d) {
        ivec2 q = pixel + d * step;
        if (all(greaterThanEqual(q, ivec2(0))) && all(lessThan(q, parameters.size))) {
            sum += texelFetch(source, q, 0);
        }
    }
    imageStore(destination, pixel, sum / float(2 * parameters.radius + 1));
}
