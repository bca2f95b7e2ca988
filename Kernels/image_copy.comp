#version 450
// One image into another of the same size and format, texel for texel (`ImageCopier`): every
// format Velvet uses goes through float and back unchanged.
layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source;   // nearest
layout(binding = 1) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 size;
} parameters;

void main() {
    ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(pixel, parameters.size))) {
        return;
    }
    imageStore(destination, pixel, texelFetch(source, pixel, 0));
}
