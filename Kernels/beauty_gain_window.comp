#version 450
// The strength fit's per-face results of a frame averaged with those of the same face (its
// track) in the frames around it, as many after as before (zero phase: no lag), over the
// frames where the face was measured. One invocation per face of the frame. A result equal
// in every float to the face's in the frame before (its pixels and landmarks repeated that
// frame) takes that frame's average unchanged, so a repeated frame renders the same.
layout(local_size_x = 64) in;

// The frames' raw results, then the frame before's averages (`table` gives float offsets).
layout(std430, binding = 0) readonly buffer Window { float data[]; } window;
// Per face, TAPS + 2 offsets (-1: none): the face's raw results in each frame of the window
// (the frame itself at `centre`), then its raw results and average in the frame before.
layout(std430, binding = 1) readonly buffer Table { int data[]; } table;
layout(std430, binding = 2) writeonly buffer Averaged { float data[]; } averaged; // faces x stride

layout(push_constant) uniform Parameters {
    int faceCount;
    int stride;
    int taps;
    int centre;
} parameters;

void main() {
    int face = int(gl_GlobalInvocationID.x);
    if (face >= parameters.faceCount) {
        return;
    }
    int taps = parameters.taps;
    int row = face * (taps + 2);
    int own = table.data[row + parameters.centre];
    int lastRaw = table.data[row + taps];
    int lastAverage = table.data[row + taps + 1];
    bool repeats = lastRaw >= 0 && lastAverage >= 0;
    for (int i = 0; i < parameters.stride && repeats; i++) {
        repeats = window.data[own + i] == window.data[lastRaw + i];
    }
    for (int i = 0; i < parameters.stride; i++) {
        float value;
        if (repeats) {
            value = window.data[lastAverage + i];
        } else {
            float sum = 0.0;
            int count = 0;
            for (int tap = 0; tap < taps; tap++) {
                int at = table.data[row + tap];
                if (at >= 0) {
                    sum += window.data[at + i];
                    count++;
                }
            }
            value = sum / float(count);
        }
        averaged.data[face * parameters.stride + i] = value;
    }
}
