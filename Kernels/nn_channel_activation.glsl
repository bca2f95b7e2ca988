// An activation whose PRELU slopes live in the constants buffer (#include after the kernel
// declares `constants`): `kind` applied to channel group `c4`, the slopes at `alphaOffset`.
vec4 act(vec4 v, int kind, int alphaOffset, int c4) {
    return kind == ACT_NONE ? v : activate(v, kind, kind == ACT_PRELU ? constants[alphaOffset + c4] : vec4(0.0));
}
