import VelvetGPU

/// The per-pixel face kernels' face table (`face_table.glsl`, FACE_TABLE_DIRECT: the mask,
/// blend, makeup and reshape kernels) is bound twice, as texels and, last, as a storage
/// buffer; the kernels read the one the device reads faster.
enum FaceTable {
    /// Texels on CPU devices (lavapipe loads a storage buffer lane by lane, a texel in one
    /// gather); the storage buffer on GPUs (one address read by every lane is one broadcast
    /// load: texels cost the H200 4.5 % more GPU time in the skin stages).
    /// `texels` overrides the device's choice (tests run both ways on one device).
    static func specialization(_ context: GPUContext, texels: Bool? = nil) -> [String: SpecializationValue] {
        ["FACE_TABLE_TEXELS": .int(texels ?? (context.device.kind == .cpu) ? 1 : 0)]
    }
}
