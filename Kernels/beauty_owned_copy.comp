#version 450
#extension GL_GOOGLE_include_directive : enable
// Copies one face's result of a size-dependent stage (spots, smoothing), computed over
// the face's region at the face's own scale, into the frame's image where that face owns
// the pixel (the skin mask's owner image, nearest), and where no face does.
#include "beauty_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(binding = 0) uniform sampler2D source; // nearest: the face's result
layout(binding = 1) uniform sampler2D owner;  // nearest, at mask resolution: face index, -1 none
layout(binding = 2) writeonly uniform image2D destination;

layout(push_constant) uniform Parameters {
    ivec2 origin;
    ivec2 size;
    vec2 inverseFrame;
    int face;
} parameters;

void main() {
    ivec2 pixel = parameters.origin + ivec2(gl_GlobalInvocationID.xy);
    if (!beautyInRegion(pixel, parameters.origin, parameters.size)) {
        return;
    }
    float index = texture(owner, (vec2(pixel) + 0.5) * parameters.inverseFrame).r;
    if (index < 0.0 || int(index + 0.5) == parameters.face) {
        imageStore(destination, pixel, texelFetch(source, pixel, 0));
    }
}
