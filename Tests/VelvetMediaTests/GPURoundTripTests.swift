import CFFmpeg
import VelvetGPU
@testable import VelvetMedia
import VelvetTestSupport
import XCTest

/// The GPU colour path with nothing changed, for every pixel format the kernels read
/// (`VideoPlaneLayout.readableFormats`): a frame of random samples (every code value,
/// including those outside the nominal range, whose R'G'B' lies outside 0...1) goes upload ->
/// colour in (the rgba16f working image) -> colour out -> download, the way
/// `RenderOptions.forcesGPURoundTrip` makes the renderer take an unchanged frame. Without it
/// an unchanged frame skips the GPU, so the identity tests alone would pass by construction.
final class GPURoundTripTests: GPUTestCase {
    private var converter: ColorConverter?

    /// Output with the input's layout, colour and orientation: only the (zero) change passes
    /// through the working image, so every format, 16-bit ones included, comes back bit-exact.
    /// Catches a wrong plane, pitch, sample scale or bit shift, chroma sites left unwritten at
    /// the edges, and any rounding error of the write-back (a store one level off fails here).
    func testUnchangedFramesComeBackBitExact() throws {
        for format in VideoPlaneLayout.readableFormats {
            let layout = try XCTUnwrap(VideoPlaneLayout(format))
            let size = layout.chromaShift == (0, 0) ? (69, 45) : (70, 46)
            let processor = try makeProcessor(layout, size: size, inputOrientation: .identity)
            XCTAssertTrue(processor.plan.usesDelta)
            for frameIndex in 0..<2 {
                let input = try RandomFrame.make(layout, width: size.0, height: size.1, seed: UInt64(frameIndex))
                let output = try processor.process(input, index: frameIndex, time: 0, isStillImage: false, effect: nil)
                XCTAssertTrue(output !== input, "\(layout.name): the frame must come from the GPU, not be passed on")
                let sections = Set(processor.lastTimings.sections.map(\.label))
                XCTAssertTrue(sections.isSuperset(of: ["upload", "color_in", "color_out", "download"]), "\(layout.name): \(sections)")
                let (expected, got) = (PlaneSamples(input, layout), PlaneSamples(output, layout))
                XCTAssertEqual(expected.maxDifference(to: got), 0, "\(layout.name) frame \(frameIndex): not bit-exact")
            }
        }
    }

    /// A frame whose planes are large enough to be copied into staging in parts
    /// (`ParallelCopy`), and whose rows are not a multiple of 64 bytes (so the downloads the
    /// encoder's frame wraps, `MediaFrame(wrapping:)`, have padded rows), comes back
    /// bit-exact, 8- and 16-bit.
    func testLargeFramesComeBackBitExact() throws {
        for format in [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE] {
            let layout = try XCTUnwrap(VideoPlaneLayout(format))
            let size = (722, 398)
            XCTAssertGreaterThan(ParallelCopy.parts(for: size.0 * size.1), ProcessInfo.processInfo.activeProcessorCount > 1 ? 1 : 0)
            let processor = try makeProcessor(layout, size: size, inputOrientation: .identity)
            let input = try RandomFrame.make(layout, width: size.0, height: size.1, seed: 5)
            let output = try processor.process(input, index: 0, time: 0, isStillImage: false, effect: nil)
            XCTAssertTrue(output !== input)
            XCTAssertEqual(PlaneSamples(input, layout).maxDifference(to: PlaneSamples(output, layout)), 0, layout.name)
        }
    }

    /// A frame staged by the decode thread (`FrameStaging`) is uploaded from its staging, whole,
    /// for every readable format at odd sizes: after staging, the frame's own samples are
    /// replaced, and what comes back is still the frame as staged (a plane staged short, or the
    /// upload copying the frame again, fails here); the staging is let go once uploaded.
    func testStagedFramesAreUploadedAsStaged() throws {
        for format in VideoPlaneLayout.readableFormats {
            let layout = try XCTUnwrap(VideoPlaneLayout(format))
            let size = layout.chromaShift == (0, 0) ? (69, 45) : (70, 46)
            let processor = try makeProcessor(layout, size: size, inputOrientation: .identity)
            let input = try RandomFrame.make(layout, width: size.0, height: size.1, seed: 21)
            let expected = PlaneSamples(input, layout)
            try FrameStaging.stage(input, context: context)
            XCTAssertEqual((input.stagedUpload as? FrameStaging.Planes)?.planes.count, layout.planes.count, layout.name)
            let other = try RandomFrame.make(layout, width: size.0, height: size.1, seed: 22)
            for plane in layout.planes.indices {
                let pitch = Int(velvet_frame_linesize(input.pointer, Int32(plane)))
                XCTAssertEqual(pitch, Int(velvet_frame_linesize(other.pointer, Int32(plane))))
                let rows = layout.planeSize(plane, width: size.0, height: size.1).1
                try XCTUnwrap(velvet_frame_data(input.pointer, Int32(plane)))
                    .update(from: try XCTUnwrap(velvet_frame_data(other.pointer, Int32(plane))), count: pitch * rows)
            }
            XCTAssertGreaterThan(expected.maxDifference(to: PlaneSamples(input, layout)), 0, layout.name)
            let output = try processor.process(input, index: 0, time: 0, isStillImage: false, effect: nil)
            XCTAssertNil(input.stagedUpload, layout.name)
            XCTAssertEqual(expected.maxDifference(to: PlaneSamples(output, layout)), 0, "\(layout.name): not the staged frame")
        }
    }

    /// Without the option an unchanged frame is the decoded frame itself (no colour out, no download).
    func testWithoutTheOptionTheDecodedFrameIsPassedOn() throws {
        let layout = try XCTUnwrap(VideoPlaneLayout(AV_PIX_FMT_YUV420P))
        let processor = try makeProcessor(layout, size: (70, 46), inputOrientation: .identity, forcesRoundTrip: false)
        let input = try RandomFrame.make(layout, width: 70, height: 46, seed: 7)
        XCTAssertTrue(try processor.process(input, index: 0, time: 0, isStillImage: false, effect: nil) === input)
        XCTAssertFalse(processor.lastTimings.sections.map(\.label).contains("color_out"))
    }

    /// A frame turned upright (a phone video written to Matroska) is converted directly:
    /// planes -> R'G'B' in rgba16f -> planes, with no original to add a change to, so the
    /// conversion pair itself must be an exact inverse (a matrix, offset or scale one level
    /// off fails here, at 8 bits). The working image holds 11 significant bits, so deeper
    /// samples come back within `directTolerance`. Subsampled chroma is filtered again on
    /// the way out (bilinear in, [1 2 1] or box out), so for those layouts only luma is compared.
    func testDirectConversionIsExactToTheWorkingImagePrecision() throws {
        let turn = Orientation(quarterTurns: 1, mirrored: false)
        for format in VideoPlaneLayout.readableFormats {
            let layout = try XCTUnwrap(VideoPlaneLayout(format))
            let size = (70, 46)
            let processor = try makeProcessor(layout, size: size, inputOrientation: turn)
            XCTAssertFalse(processor.plan.usesDelta)
            let input = try RandomFrame.make(layout, width: size.0, height: size.1, seed: 11)
            let output = try processor.process(input, index: 0, time: 0, isStillImage: false, effect: nil)
            let expected = PlaneSamples(input, layout).turnedUpright(turn)
            let got = PlaneSamples(output, layout)
            let planes = layout.chromaShift == (0, 0) ? Array(layout.planes.indices) : [0]
            let worst = expected.maxDifference(to: got, planes: planes)
            let bar = Self.directTolerance(layout)
            print("[round trip] \(layout.name) direct: max \(worst) level(s) (bar \(bar)), planes \(planes)")
            XCTAssertLessThanOrEqual(worst, bar, "\(layout.name): direct conversion")
        }
    }

    /// Levels a directly converted sample may be off: one fp16 unit in the last place (Vulkan
    /// lets the fp16 store round toward zero, and lavapipe does: 2^-11 below 1, 2^-10 up to 2,
    /// 2^-9 beyond, which B' reaches, up to 2.1, when chroma is far outside its nominal range)
    /// times the gain from R'G'B' to a code (219 or 224 steps per unit at 8 bits; Pb takes
    /// 0.17, 0.33 and 0.5 of R', G', B'), rounded to the nearest level. Worst cases: 0.33 of a
    /// level at 8 bits, so none; 1.3 at 10, so 1; 5.3 at 12, so 5; 84 at 16 (0.13 % of full
    /// scale). RGBA is stored as it is (0...1, a unit of 2^-11): 32 levels at 16 bits, none at 8.
    static func directTolerance(_ layout: VideoPlaneLayout) -> Int {
        if layout.kind == .rgba { return layout.bitDepth == 16 ? 32 : 0 }
        switch layout.bitDepth {
        case ...8: return 0
        case 10: return 1
        case 12: return 5
        default: return 84
        }
    }

    private func makeProcessor(_ layout: VideoPlaneLayout, size: (Int, Int), inputOrientation: Orientation,
                               forcesRoundTrip: Bool = true) throws -> FrameProcessor {
        let probe = try RandomFrame.make(layout, width: size.0, height: size.1, seed: 0)
        let color = ColorDescription(frame: probe.pointer, layout: layout)
        let plan = FrameProcessor.Plan(inputLayout: layout, outputLayout: layout, encoderPixelFormat: layout.pixelFormat,
                                       inputColor: color, outputColor: color, inputOrientation: inputOrientation,
                                       outputOrientation: .identity, storedWidth: size.0, storedHeight: size.1)
        if converter == nil { converter = try ColorConverter(context: context) }
        return try FrameProcessor(context: context, converter: converter!, plan: plan, forcesRoundTrip: forcesRoundTrip)
    }
}

extension VideoPlaneLayout {
    var name: String { PixelRepacker.name(pixelFormat) }
    /// Values per pixel of each plane (1 for Y, 2 for interleaved UV, 4 for RGBA).
    func components(_ plane: Int) -> Int { planes[plane].format.bytesPerPixel / bytesPerSample }
    /// Bytes per value: 2 for every 16-bit container.
    var bytesPerSample: Int { [.r16, .rg16, .rgba16].contains(planes[0].format) ? 2 : 1 }
}

/// A decoded-looking frame of seeded random samples: each a random code of the layout's bit
/// depth, placed at its bit shift (P010 holds 10 bits in the top of 16).
enum RandomFrame {
    static func make(_ layout: VideoPlaneLayout, width: Int, height: Int, seed: UInt64) throws -> MediaFrame {
        let frame = try MediaFrame()
        frame.pointer.pointee.format = layout.pixelFormat.rawValue
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        guard av_frame_get_buffer(frame.pointer, 0) >= 0 else { throw MediaError.unsupported("no frame buffer") }
        var random = SeededGenerator(state: seed &+ UInt64(layout.pixelFormat.rawValue) &* 1000)
        let codes = UInt64(1) << layout.bitDepth
        for plane in layout.planes.indices {
            let (planeWidth, planeHeight) = layout.planeSize(plane, width: width, height: height)
            let values = planeWidth * layout.components(plane)
            let pitch = Int(velvet_frame_linesize(frame.pointer, Int32(plane)))
            let base = try XCTUnwrap(velvet_frame_data(frame.pointer, Int32(plane)))
            for row in 0..<planeHeight {
                for index in 0..<values {
                    let code = (random.next() % codes) << UInt64(layout.shift)
                    let at = base + row * pitch + index * layout.bytesPerSample
                    at[0] = UInt8(truncatingIfNeeded: code)
                    if layout.bytesPerSample == 2 { at[1] = UInt8(truncatingIfNeeded: code >> 8) }
                }
            }
        }
        return frame
    }
}

/// A frame's samples as codes (shift removed), plane by plane.
struct PlaneSamples {
    struct Plane { var width: Int, height: Int, components: Int, values: [Int] }
    var planes: [Plane]

    init(planes: [Plane]) { self.planes = planes }

    init(_ frame: MediaFrame, _ layout: VideoPlaneLayout) {
        planes = layout.planes.indices.map { index in
            let (width, height) = layout.planeSize(index, width: frame.width, height: frame.height)
            let components = layout.components(index)
            let pitch = Int(velvet_frame_linesize(frame.pointer, Int32(index)))
            let base = velvet_frame_data(frame.pointer, Int32(index))!
            var values: [Int] = []
            values.reserveCapacity(width * height * components)
            for row in 0..<height {
                for value in 0..<(width * components) {
                    let at = base + row * pitch + value * layout.bytesPerSample
                    let raw = layout.bytesPerSample == 2 ? Int(at[0]) | Int(at[1]) << 8 : Int(at[0])
                    values.append(raw >> layout.shift)
                }
            }
            return Plane(width: width, height: height, components: components, values: values)
        }
    }

    /// The planes as the upright image shows them (each plane turned on its own grid).
    func turnedUpright(_ orientation: Orientation) -> PlaneSamples {
        PlaneSamples(planes: planes.map { plane in
            let upright = orientation.uprightSize(width: plane.width, height: plane.height)
            var values = [Int](repeating: 0, count: plane.values.count)
            for y in 0..<upright.height {
                for x in 0..<upright.width {
                    let (sx, sy) = orientation.storedPixel((x, y), storedWidth: plane.width, storedHeight: plane.height)
                    for c in 0..<plane.components {
                        values[(y * upright.width + x) * plane.components + c] = plane.values[(sy * plane.width + sx) * plane.components + c]
                    }
                }
            }
            return Plane(width: upright.width, height: upright.height, components: plane.components, values: values)
        })
    }

    /// The largest difference of any sample of `planes` (every plane when nil); Int.max when the shapes differ.
    func maxDifference(to other: PlaneSamples, planes chosen: [Int]? = nil) -> Int {
        var worst = 0
        for index in chosen ?? Array(planes.indices) {
            let (a, b) = (planes[index], other.planes[index])
            guard a.width == b.width, a.height == b.height, a.values.count == b.values.count else { return .max }
            for (x, y) in zip(a.values, b.values) { worst = max(worst, abs(x - y)) }
        }
        return worst
    }
}
