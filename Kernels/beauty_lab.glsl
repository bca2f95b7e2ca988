// CIELAB (D65) of non-linear sRGB colours and back, as ColourDifference.lab(fromSRGB:) on
// the CPU (the retouch stages work in L*, a*, b*; the quality metrics judge in the same).

float labLinear(float c) { return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4); }
float labEncoded(float c) { return c <= 0.0031308 ? 12.92 * c : 1.055 * pow(c, 1.0 / 2.4) - 0.055; }
float labF(float t) { return t > 216.0 / 24389.0 ? pow(t, 1.0 / 3.0) : (24389.0 / 27.0 * t + 16.0) / 116.0; }
float labFInverse(float f) { return f * f * f > 216.0 / 24389.0 ? f * f * f : (116.0 * f - 16.0) * 27.0 / 24389.0; }

vec3 labFromRGB(vec3 rgb) {
    vec3 c = clamp(rgb, 0.0, 1.0);
    vec3 l = vec3(labLinear(c.r), labLinear(c.g), labLinear(c.b));
    float x = 0.4124564 * l.r + 0.3575761 * l.g + 0.1804375 * l.b;
    float y = 0.2126729 * l.r + 0.7151522 * l.g + 0.0721750 * l.b;
    float z = 0.0193339 * l.r + 0.1191920 * l.g + 0.9503041 * l.b;
    float fx = labF(x / 0.95047), fy = labF(y), fz = labF(z / 1.08883);
    return vec3(116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz));
}

// Non-linear sRGB of a CIELAB colour, clamped to 0...1.
vec3 rgbFromLab(vec3 lab) {
    float fy = (lab.x + 16.0) / 116.0;
    float fx = fy + lab.y / 500.0, fz = fy - lab.z / 200.0;
    float x = 0.95047 * labFInverse(fx), y = labFInverse(fy), z = 1.08883 * labFInverse(fz);
    vec3 l = vec3(3.2404542 * x - 1.5371385 * y - 0.4985314 * z,
                  -0.9692660 * x + 1.8760108 * y + 0.0415560 * z,
                  0.0556434 * x - 0.2040259 * y + 1.0572252 * z);
    l = clamp(l, 0.0, 1.0);
    return vec3(labEncoded(l.r), labEncoded(l.g), labEncoded(l.b));
}
