import CFFmpeg
import Foundation
import VelvetFiles
import VelvetGPU
import VelvetKernels

/// Where a photo sits in a synthetic frame: scaled by `scale` and turned by `rotation`
/// (radians, clockwise on screen) about its centre, which lands `translation` pixels from
/// the frame's centre. Frame point = S R (photo point - photo centre) + frame centre + t.
public struct SimilarityTransform: Sendable, Equatable {
    public var scale: Double
    public var rotation: Double
    public var translation: (x: Double, y: Double)

    public init(scale: Double = 1, rotation: Double = 0, translation: (x: Double, y: Double) = (0, 0)) {
        (self.scale, self.rotation, self.translation) = (scale, rotation, translation)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.scale == rhs.scale && lhs.rotation == rhs.rotation && lhs.translation == rhs.translation
    }

    /// Maps a photo point to the frame, for frames of `frameSize` from a photo of `photoSize`.
    public func apply(_ point: (x: Double, y: Double), photoSize: (Int, Int), frameSize: (Int, Int)) -> (x: Double, y: Double) {
        let dx = point.x - Double(photoSize.0) / 2, dy = point.y - Double(photoSize.1) / 2
        let (c, s) = (cos(rotation), sin(rotation))
        return (scale * (c * dx - s * dy) + Double(frameSize.0) / 2 + translation.x,
                scale * (s * dx + c * dy) + Double(frameSize.1) / 2 + translation.y)
    }
}

/// Writes clips with known motion made from a still photo (tests, the demo, benchmarks):
/// every frame is the photo under a similarity transform, optionally with fresh noise.
public final class ClipSynthesizer: @unchecked Sendable {
    private let context: GPUContext
    private let converter: ColorConverter
    private let warp: TypedKernel<KernelLibrary.SimilarityWarpPush>

    public init(context: GPUContext) throws {
        self.context = context
        converter = try ColorConverter(context: context)
        warp = try TypedKernel(context: context)
    }

    /// - Parameters:
    ///   - noiseSigma: standard deviation of per-frame Gaussian noise in 0...1 units (0: none).
    public func write(photo: GPUImage, to path: String, width: Int, height: Int, frames: Int, frameRate: Int = 25,
                      noiseSigma: Float = 0, settings: EncoderSettings = EncoderSettings(), commit: CommitPolicy = .replace,
                      transform: (Int) -> SimilarityTransform) throws {
        guard frames >= 1, (1...MediaReader.maxDimension).contains(width), (1...MediaReader.maxDimension).contains(height),
              width % 2 == 0, height % 2 == 0 else {
            throw MediaError.invalidDimensions(width: width, height: height, limit: MediaReader.maxDimension)
        }
        let container = try OutputContainer(path: path, formatName: settings.format)
        let still = container.isStillImage
        let codec = try EncoderTuning.encoder(for: container, settings: settings)
        let encoderFormat = try MediaWriter.encoderPixelFormat(codec: codec, source: AV_PIX_FMT_YUV420P,
                                                               requested: settings.pixelFormat, still: still)
        // Stills (PNG) get RGBA, repacked exactly to the encoder's RGB; video the encoder's YUV.
        let layout = VideoPlaneLayout.closestReadable(to: encoderFormat)
        let color = layout.kind == .rgba || !still ? ColorDescription.video() : .jpeg()
        let writer = try MediaWriter(path: path, reader: nil, frameRate: AVRational(num: Int32(frameRate), den: 1),
                                     size: (width, height), sourcePixelFormat: layout.pixelFormat,
                                     encoderPixelFormat: encoderFormat, color: color, settings: settings, commit: commit)
        let working = try GPUImage(context: context, width: width, height: height, format: .rgba16f)
        let planes = try converter.makePlanes(layout, width: width, height: height)
        do {
            for index in 0..<frames {
                let recorder = try CommandRecorder(context: context)
                let motion = transform(index)
                let (c, s) = (cos(motion.rotation), sin(motion.rotation))
                // Inverse of S R: frame offsets -> photo offsets.
                let push = KernelLibrary.SimilarityWarpPush(
                    outputSize: SIMD2(Int32(width), Int32(height)), sourceSize: SIMD2(Int32(photo.width), Int32(photo.height)),
                    matrix: SIMD4(Float(c / motion.scale), Float(s / motion.scale), Float(-s / motion.scale), Float(c / motion.scale)),
                    outputCentre: SIMD2(Float(Double(width) / 2 + motion.translation.x), Float(Double(height) / 2 + motion.translation.y)),
                    sourceCentre: SIMD2(Float(photo.width) / 2, Float(photo.height) / 2),
                    noiseSigma: noiseSigma, seed: UInt32(truncatingIfNeeded: index &* 2_654_435_761 &+ 1))
                recorder.dispatch(warp, [.sampledImage(photo, .linear), .storageImage(working)], push: push, covering: width, height)
                try converter.recordToPlanes(processed: working, original: nil, output: planes, layout: layout, color: color,
                                         orientation: .identity, on: recorder)
                let readbacks = try planes.map { try recorder.download($0) }
                try recorder.submit().wait()
                let frame = try MediaFrame(copying: readbacks, planes: planes, format: layout.pixelFormat)
                frame.pointer.pointee.pts = Int64(index)
                try writer.encode(frame)
            }
            try writer.finish()
        } catch {
            writer.abort()
            throw error
        }
    }
}
