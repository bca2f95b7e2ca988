import VelvetBeauty
import VelvetGPU

extension PlaneImage {
    /// The values of a downloaded one-channel image (r16f or r32f) of `width` x `height`.
    init(downloaded readback: GPUReadback, width: Int, height: Int) {
        let count = width * height
        let values: [Float] = readback.raw.count / max(count, 1) == 4
            ? Array(readback.raw.bindMemory(to: Float.self).prefix(count))
            : readback.raw.bindMemory(to: UInt16.self).prefix(count).map { Float(Float16(bitPattern: $0)) }
        self.init(width: width, height: height, values: values)
    }
}
