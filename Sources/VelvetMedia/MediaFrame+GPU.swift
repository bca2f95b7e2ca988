import CFFmpeg
import VelvetGPU

extension MediaFrame {
    /// A frame in `format` holding the downloaded planes (rows copied to FFmpeg's padded
    /// layout), its buffers from `pool` when given, else freshly allocated.
    convenience init(copying readbacks: [GPUReadback], planes: [GPUImage], format: AVPixelFormat,
                     pool: OutputFramePool? = nil) throws {
        try self.init()
        pointer.pointee.format = format.rawValue
        pointer.pointee.width = Int32(planes[0].width)
        pointer.pointee.height = Int32(planes[0].height)
        if let pool {
            try pool.attachBuffers(to: pointer)
        } else {
            let allocated = av_frame_get_buffer(pointer, 0)
            guard allocated >= 0 else { throw MediaError.encode(ffmpegMessage(allocated)) }
        }
        for (index, readback) in readbacks.enumerated() {
            let image = planes[index]
            let rowBytes = image.width * image.format.bytesPerPixel
            let pitch = Int(velvet_frame_linesize(pointer, Int32(index)))
            guard let destination = velvet_frame_data(pointer, Int32(index)), let source = readback.raw.baseAddress else { continue }
            let height = image.height
            let parts = ParallelCopy.parts(for: rowBytes * height)
            let rowsPerPart = (height + parts - 1) / parts
            ParallelCopy.run(parts: parts) { part in
                for row in (part * rowsPerPart)..<min(height, (part + 1) * rowsPerPart) {
                    (destination + row * pitch).update(from: source.advanced(by: row * rowBytes).assumingMemoryBound(to: UInt8.self),
                                                       count: rowBytes)
                }
            }
        }
    }
}

/// Buffers for the frames the GPU thread hands to the encoder, one FFmpeg buffer pool per
/// plane: the same few buffers go round (the encoder releases a frame, the next one reuses
/// its memory), so a long render does not allocate a frame's worth of memory per frame,
/// which fragmented the heap and grew the process over a 10,000-frame soak.
final class OutputFramePool: @unchecked Sendable {
    private var pools: [OpaquePointer]
    private let linesizes: [Int]

    /// Planes shaped like `planes` (the GPU images the frames are downloaded from).
    init(planes: [GPUImage]) throws {
        var pools: [OpaquePointer] = []
        var linesizes: [Int] = []
        for plane in planes {
            // Rows padded to 64 bytes, as av_frame_get_buffer does, plus FFmpeg's read-past padding.
            let linesize = (plane.width * plane.format.bytesPerPixel + 63) / 64 * 64
            guard let pool = av_buffer_pool_init(linesize * plane.height + Int(AV_INPUT_BUFFER_PADDING_SIZE), nil) else {
                for var made in pools as [OpaquePointer?] { av_buffer_pool_uninit(&made) }
                throw MediaError.unsupported("out of memory making a frame buffer pool")
            }
            pools.append(pool)
            linesizes.append(linesize)
        }
        self.pools = pools
        self.linesizes = linesizes
    }

    deinit {
        // A pool is freed once the last frame using it is released.
        for var pool in pools as [OpaquePointer?] { av_buffer_pool_uninit(&pool) }
    }

    func attachBuffers(to frame: UnsafeMutablePointer<AVFrame>) throws {
        for (index, pool) in pools.enumerated() {
            guard let buffer = av_buffer_pool_get(pool) else { throw MediaError.unsupported("out of memory for a frame buffer") }
            velvet_frame_set_plane(frame, Int32(index), buffer, Int32(linesizes[index]))
        }
    }
}
