import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import XCTest

/// A stage added after the stage protocol, in a test target: its file is the stage and its
/// knob table; it joins the chain by one line in the list the chain is made from.
final class BlurStage: BeautyStage {
    struct Settings: KnobSettings, Equatable {
        var sigma: Float = 0
        static var knobs: [Knob<Settings>] { [.number("sigma", flag: "--blur", \.sigma, 0...8, "frame blur sigma, pixels")] }
    }

    /// nil when idle: an idle stage builds no kernels.
    private let blur: GaussianBlur?
    private let settings: Settings
    private var scratch: GPUImage?

    init(context: GPUContext, settings: Settings) throws {
        try settings.checkKnobs(prefix: "blur")
        blur = settings.sigma == 0 ? nil : try GaussianBlur(context: context, sigma: max(settings.sigma, 0.5))
        self.settings = settings
    }

    var section: String? { "blur" }
    var isIdle: Bool { blur == nil }
    var appliesUserMatte: Bool { false }

    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        guard let blur else { return .skipped }
        if scratch?.width != source.width || scratch?.height != source.height {
            scratch = try GPUImage(context: source.context, width: source.width, height: source.height, format: .rgba16f)
        }
        try blur.record(on: recorder, source: source, destination: destination, scratch: scratch!, sigma: settings.sigma)
        return .wrote(frame.whole)
    }
}

/// Copies its source and paints one rectangle of it from another image (or writes nothing).
private final class PatchStage: BeautyStage {
    let patch: GPUImage?
    let region: PixelRegion
    let appliesUserMatte: Bool
    init(patch: GPUImage?, region: PixelRegion, appliesUserMatte: Bool = true) {
        (self.patch, self.region, self.appliesUserMatte) = (patch, region, appliesUserMatte)
    }
    var section: String? { "patch" }
    var isIdle: Bool { false }
    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        guard let patch else { return .skipped }
        XCTAssertFalse(source === destination, "a stage writes another image than it reads")
        XCTAssertFalse(destination === frame.input, "the input is never written")
        try recorder.copy(source, to: destination)
        try recorder.copyRegion(from: patch, to: destination, x: region.x, y: region.y, width: region.width, height: region.height)
        return .wrote(region)
    }
}

/// Pointwise: records whether the chain handed it its source as the destination.
private final class InPlaceProbe: BeautyStage {
    var wroteInPlace: [Bool] = []
    var section: String? { "probe" }
    var isIdle: Bool { false }
    var appliesUserMatte: Bool { true }
    var isPointwise: Bool { true }
    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        XCTAssertFalse(destination === frame.input, "the input is never written")
        wroteInPlace.append(source === destination)
        if source !== destination { try recorder.copy(source, to: destination) }
        return .wrote(PixelRegion(x: 0, y: 0, width: 0, height: 0))
    }
}

final class BeautyChainTests: GPUTestCase {
    private let width = 64, height = 48

    private func image(filledWith value: UInt8) throws -> GPUImage {
        let image = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        let recorder = try CommandRecorder(context: context)
        try [UInt8](repeating: value, count: width * height * 4).withUnsafeBytes { try recorder.upload($0, to: image) }
        try recorder.submit().wait()
        return image
    }

    private func run(_ stages: [any BeautyStage], input: GPUImage, matte: GPUImage? = nil) throws -> (PixelRegion?, [UInt8]) {
        let output = try image(filledWith: 7)
        let recorder = try CommandRecorder(context: context)
        let frame = StageFrame(input: input, faces: [], personMask: nil, userMatte: matte)
        let changed = try BeautyChain(context: context, stages: stages).record(on: recorder, frame: frame, output: output)
        let readback = try recorder.download(output)
        try recorder.submit().wait()
        return (changed, readback.bytes)
    }

    /// Regions are unioned, a skipped stage leaves the frame as it was, and the output holds
    /// the result exactly: the patches inside, the input everywhere else.
    func testChainUnionsRegionsAndSkips() throws {
        let input = try image(filledWith: 100), white = try image(filledWith: 255), black = try image(filledWith: 0)
        let first = PixelRegion(x: 2, y: 3, width: 10, height: 5), second = PixelRegion(x: 30, y: 20, width: 8, height: 9)
        let (changed, pixels) = try run([PatchStage(patch: white, region: first), PatchStage(patch: nil, region: first),
                                         PatchStage(patch: black, region: second)], input: input)
        XCTAssertEqual(changed, first.union(second))
        for y in 0..<height { for x in 0..<width {
            let expected: UInt8 = first.contains(x: x, y: y) ? 255 : second.contains(x: x, y: y) ? 0 : 100
            XCTAssertEqual(pixels[(y * width + x) * 4], expected, "pixel \(x),\(y)")
        } }
        let (nothing, _) = try run([PatchStage(patch: nil, region: first)], input: input)
        XCTAssertNil(nothing, "only skipped stages: nothing changed")
    }

    /// A pointwise stage writes the image it reads, except the frame's input.
    func testPointwiseStagesWorkInPlaceButNeverOnTheInput() throws {
        let input = try image(filledWith: 100), white = try image(filledWith: 255)
        let patch = PixelRegion(x: 1, y: 1, width: 4, height: 4)
        let first = InPlaceProbe(), second = InPlaceProbe()
        let (changed, pixels) = try run([first, PatchStage(patch: white, region: patch), second], input: input)
        XCTAssertEqual(first.wroteInPlace, [false], "the first stage reads the input: it writes another image")
        XCTAssertEqual(second.wroteInPlace, [true])
        XCTAssertEqual(changed, patch)
        XCTAssertEqual(pixels[(2 * width + 2) * 4], 255)
        XCTAssertEqual(pixels[(20 * width + 20) * 4], 100)
    }

    /// A stage that does not apply the user's matte reaches the output only through it:
    /// where the matte is 0 the output is the image before that stage.
    func testStagesThatIgnoreTheMatteAreCompositedThroughIt() throws {
        let input = try image(filledWith: 100), white = try image(filledWith: 255), zero = try image(filledWith: 0)
        let whole = PixelRegion(x: 0, y: 0, width: width, height: height)
        let matte = try GPUImage(context: context, width: width, height: height, format: .r16f)
        let recorder = try CommandRecorder(context: context)
        let halves: [Float16] = (0..<(width * height)).map { $0 % width < width / 2 ? 0 : 1 }
        try halves.withUnsafeBytes { try recorder.upload($0, to: matte) }
        try recorder.submit().wait()
        // The first stage applies the matte itself (it paints everything); the second does not.
        let (_, pixels) = try run([PatchStage(patch: zero, region: whole), PatchStage(patch: white, region: whole, appliesUserMatte: false)],
                                  input: input, matte: matte)
        for x in 0..<width { XCTAssertEqual(pixels[(10 * width + x) * 4], x < width / 2 ? 0 : 255, "pixel \(x)") }
    }

    /// The stage added in this file: in the chain after the skin stage it changes the frame;
    /// at sigma 0 it is idle, left out, and the output is bit-exact with the chain without it.
    func testAStageAddedInATestTargetJoinsTheChain() throws {
        let fixture = try FaceFixture.load("astronaut")
        let input = try GPUImage(context: context, width: fixture.width, height: fixture.height, format: .rgba8)
        let upload = try CommandRecorder(context: context)
        try fixture.rgba.withUnsafeBytes { try upload.upload($0, to: input) }
        try upload.submit().wait()
        func render(blur sigma: Float) throws -> (Int, [UInt8]) {
            let output = try GPUImage(context: context, width: fixture.width, height: fixture.height, format: .rgba8)
            let chain = try BeautyChain(context: context, stages: [
                try SkinStage(pipeline: SkinPipeline(context: context), settings: BeautyPreset.shippedDefault.skinSettings()),
                try BlurStage(context: context, settings: BlurStage.Settings(sigma: sigma)),
            ])
            let recorder = try CommandRecorder(context: context)
            let frame = StageFrame(input: input, faces: fixture.faces, personMask: nil)
            XCTAssertNotNil(try chain.record(on: recorder, frame: frame, output: output))
            let readback = try recorder.download(output)
            try recorder.submit().wait()
            return (chain.stages.count, readback.bytes)
        }
        let (stagesWithout, without) = try render(blur: 0)
        let (stagesWith, with) = try render(blur: 2)
        XCTAssertEqual(stagesWithout, 1, "an idle stage is left out")
        XCTAssertEqual(stagesWith, 2)
        XCTAssertGreaterThan(QualityMetrics.maxAbsDifference(without, with), 0)
        XCTAssertThrowsError(try BlurStage(context: context, settings: BlurStage.Settings(sigma: 9)))
    }

    /// An idle stage builds no kernels: built, they would be queued for compiling and dropped
    /// with the stage (on a start with a cold driver cache the drop waited for their compile).
    /// Counted by the pipeline cache, which sees every compile.
    func testIdleStagesBuildNoKernels() throws {
        let scratch = try Scratch()
        let fresh = try GPUContext(request: ProcessInfo.processInfo.environment["VELVET_DEVICE"], validation: true,
                                   pipelineCacheRoot: .some(scratch.url.path))
        func compiles() throws -> Int {
            try fresh.finishCompiling()
            return fresh.pipelineCache.hits + fresh.pipelineCache.misses
        }
        let idle: [any BeautyStage] = [
            try SharpenStage(context: fresh, amount: 0),
            try TeethStage(context: fresh, settings: TeethSettings(strength: 0)),
            try EyeBrightenStage(context: fresh, settings: EyeBrightenSettings(strength: 0)),
            try UnderEyeStage(context: fresh, settings: UnderEyeSettings()),
            try ShineStage(context: fresh, settings: ShineSettings(strength: 0)),
            try MakeupStage(context: fresh, settings: .off),
            try ReshapeStage(context: fresh, settings: ReshapeSettings()),
            try BlurStage(context: fresh, settings: BlurStage.Settings(sigma: 0)),
        ]
        XCTAssertTrue(idle.allSatisfy(\.isIdle))
        XCTAssertEqual(try compiles(), 0, "kernels built for idle stages")
        // The same stages with something to do build theirs.
        let busy: [any BeautyStage] = [
            try SharpenStage(context: fresh, amount: 0.5),
            try TeethStage(context: fresh, settings: TeethSettings(strength: 0.5)),
            try ReshapeStage(context: fresh, settings: ReshapeSettings(eyes: 0.2)),
        ]
        XCTAssertFalse(busy.contains(where: \.isIdle))
        XCTAssertGreaterThanOrEqual(try compiles(), 3)
        XCTAssertEqual(fresh.validationLog?.drain() ?? [], [])
    }
}
