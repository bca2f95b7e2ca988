#version 450
// Writes a [H, W, 3] channel-packed NHWC4 tensor from an image: tensor pixel (x, y)
// samples the image bilinearly at image pixel position M * (x + 0.5, y + 0.5, 1)
// (M a 2x3 affine transform from the host), then value = rgb * scale + offset.
// Outside the image: the sampler's clamp-to-edge, or a constant value per channel.
#include "nn_common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) uniform sampler2D image;
layout(binding = 1) writeonly buffer Output { vec4 outData[]; };

layout(push_constant) uniform Parameters {
    vec4 row0;    // m00 m01 m02 -
    vec4 row1;    // m10 m11 m12 -
    vec4 scale;   // per channel
    vec4 offset;  // per channel
    vec4 border;  // value (after mapping) outside the image, when useBorder != 0
    ivec2 size;   // tensor W, H
    int outOffset;
    int useBorder;
} p;

void main() {
    int index = linearInvocation();
    if (index >= p.size.x * p.size.y) {
        return;
    }
    int y = index / p.size.x;
    int x = index - y * p.size.x;
    vec3 centre = vec3(float(x) + 0.5, float(y) + 0.5, 1.0);
    vec2 position = vec2(dot(p.row0.xyz, centre), dot(p.row1.xyz, centre));
    vec2 extent = vec2(textureSize(image, 0));
    vec4 v;
    if (p.useBorder != 0 && (position.x < 0.0 || position.y < 0.0 || position.x > extent.x || position.y > extent.y)) {
        v = p.border;
    } else {
        v = texture(image, position / extent) * p.scale + p.offset;
    }
    outData[p.outOffset + index] = vec4(v.xyz, 0.0);
}
