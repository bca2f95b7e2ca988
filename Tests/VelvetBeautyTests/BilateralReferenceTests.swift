import Foundation
@testable import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The exact bilateral kernel (`beauty_bilateral_exact.comp`) against a plain CPU version of
/// its formula, on a crop of real skin with a mask that has a gradient, a hole and a gap.
final class BilateralReferenceTests: GPUTestCase {
    /// The GPU and CPU see the same fp16 inputs; what remains is the fp16 store of the result
    /// (one unit, 2^-11 between 0.5 and 1, when it rounds toward zero) and fp32 sums and
    /// exp(): a bar of 1/1024, a quarter of an 8-bit level. Each variant the test rules out
    /// (no range weight, range on the RGB distance, mask not weighting neighbours, colour
    /// change not scaled) is off by far more, which the test checks as well.
    static let tolerance = 1.0 / 1024

    func testExactBilateralMatchesTheCPUFormula() throws {
        let cheek = try CheekRun(context: context)
        let crop = cheek.crop, mask = cheek.mask
        let smoothing = try BilateralSmoothing(context: context, pool: ImagePool(context: context))
        // Spatial sigma = maxRadius x faceSize / 3 = 2 px: a 13 x 13 window, clamped at the crop's edges.
        let faceSize: Float = 60
        for rangeSigma: Float in [0.05, 0.1, 0.3, 0.5] {
            var settings = BeautySettings.standard
            settings.bilateral = .exact
            settings.maxRadius = 0.1
            settings.rangeSigma = rangeSigma
            settings.chromaSmoothing = 0.4
            let bytes = try cheek.smoothed(by: smoothing, settings: settings, faceSize: faceSize)
            let gpu = bytes.withUnsafeBytes { raw in
                (0..<(raw.count / 2)).map { Double(Float(raw.loadUnaligned(fromByteOffset: $0 * 2, as: Float16.self))) }
            }
            let sigma = Double(BilateralSmoothing.spatialSigma(settings: settings, faceSize: faceSize))
            func reference(_ variant: BilateralReference.Variant) -> [Double] {
                BilateralReference(width: crop.width, height: crop.height, rgba: crop.values, mask: mask, spatialSigma: sigma,
                                   rangeSigma: Double(rangeSigma), chroma: Double(settings.chromaSmoothing), variant: variant).filtered()
            }
            let worst = BilateralReference.maxDifference(gpu, reference(.asTheKernel))
            let change = BilateralReference.maxDifference(crop.values, reference(.asTheKernel))
            print(String(format: "[bilateral] range sigma %.2f: GPU vs CPU max %.5f (%.2f/255); the filter moves skin up to %.3f",
                         rangeSigma, worst, worst * 255, change))
            XCTAssertLessThanOrEqual(worst, Self.tolerance, "range sigma \(rangeSigma)")
            XCTAssertGreaterThan(change, 20 * Self.tolerance, "range sigma \(rangeSigma): the filter must change the skin")
            for variant in BilateralReference.Variant.wrong {
                let off = BilateralReference.maxDifference(gpu, reference(variant))
                XCTAssertGreaterThan(off, 10 * Self.tolerance, "range sigma \(rangeSigma): \(variant) must be told apart")
            }
        }
    }

    /// The grid's x splat with its range-bin count fixed per pipeline (CPU devices) gives the
    /// bytes the one pipeline for any count gives (GPUs), from 4 bins to the 48 of the cap.
    func testGridWithFixedBinsGivesWhatAnyBinCountGives() throws {
        let cheek = try CheekRun(context: context)
        let ways = try [true, false].map { try BilateralSmoothing(context: context, pool: ImagePool(context: context), fixesBins: $0) }
        for rangeSigma: Float in [0.01, 0.05, 0.1, 0.3, 0.5] {
            var settings = BeautySettings.standard
            settings.maxRadius = 0.1
            settings.rangeSigma = rangeSigma
            let outputs = try ways.map { try cheek.smoothed(by: $0, settings: settings, faceSize: 60) }
            XCTAssertEqual(outputs[0], outputs[1], "range sigma \(rangeSigma)")
            XCTAssertNotEqual(outputs[0], cheek.crop.half.withUnsafeBytes { Array($0) },
                              "range sigma \(rangeSigma): the grid must change the skin")
        }
    }
}

/// The astronaut's right cheek (40 x 32) with `SkinCrop.testMask`, smoothed on the GPU.
private struct CheekRun {
    let context: GPUContext
    let crop: SkinCrop
    let mask: [Float]

    init(context: GPUContext) throws {
        self.context = context
        let fixture = try FaceFixture.load("astronaut")
        let cheek = fixture.faces[0].landmarks[MeshRegion.cheekCentres.right]
        crop = SkinCrop(fixture, centre: cheek, width: 40, height: 32)
        mask = SkinCrop.testMask(width: crop.width, height: crop.height)
    }

    /// The crop through `smoothing` over its whole area: the rgba16f result's bytes.
    func smoothed(by smoothing: BilateralSmoothing, settings: BeautySettings, faceSize: Float) throws -> [UInt8] {
        let source = try GPUImage(context: context, width: crop.width, height: crop.height, format: .rgba16f)
        let maskImage = try GPUImage(context: context, width: crop.width, height: crop.height, format: .r16f)
        let destination = try GPUImage(context: context, width: crop.width, height: crop.height, format: .rgba16f)
        let recorder = try CommandRecorder(context: context)
        try crop.half.withUnsafeBytes { try recorder.upload($0, to: source) }
        try mask.map(Float16.init).withUnsafeBytes { try recorder.upload($0, to: maskImage) }
        let recorded = try smoothing.record(on: recorder, source: source, mask: maskImage, destination: destination,
                                            region: PixelRegion(x: 0, y: 0, width: crop.width, height: crop.height),
                                            faceSize: faceSize, settings: settings)
        XCTAssertTrue(recorded, "the smoothing recorded nothing")
        let readback = try recorder.download(destination)
        try recorder.submit().wait()
        return readback.bytes
    }
}

/// A crop of a fixture photo as fp16 RGBA, the values the kernel reads.
struct SkinCrop {
    let width: Int
    let height: Int
    /// R, G, B, A per pixel, 0...1, each exactly an fp16 value.
    let values: [Double]
    var half: [Float16] { values.map { Float16(Float($0)) } }

    init(_ fixture: FaceFixture, centre: SIMD2<Float>, width: Int, height: Int) {
        (self.width, self.height) = (width, height)
        let x0 = Int(centre.x) - width / 2, y0 = Int(centre.y) - height / 2
        var values: [Double] = []
        for y in 0..<height {
            for x in 0..<width {
                let at = ((y0 + y) * fixture.width + x0 + x) * 4
                values += (0..<4).map { Double(Float(Float16(Float(fixture.rgba[at + $0]) / 255))) }
            }
        }
        self.values = values
    }

    /// A skin weight rising left to right (in 32nds, exact in fp16), with a 6 x 6 hole (an
    /// eye) and a two-column gap (a brow edge): masked pixels are copied, and masked
    /// neighbours must not bleed in.
    static func testMask(width: Int, height: Int) -> [Float] {
        (0..<(width * height)).map { index in
            let (x, y) = (index % width, index / width)
            if (12..<18).contains(x) && (10..<16).contains(y) { return 0 }
            if x == 28 || x == 29 { return 0 }
            return Float(8 + 24 * x / (width - 1)) / 32
        }
    }
}

/// The formula of `beauty_bilateral_exact.comp`, in double precision: over a (2R+1)^2 window
/// (R = ceil(3 sigma), edges clamped) each neighbour weighs
/// exp(-d^2 / 2 sigmaSpace^2 - (Y'n - Y'c)^2 / 2 sigmaRange^2) x its mask value (BT.709 luma);
/// RGB is the weighted mean; the luma change is kept whole and the rest scaled by `chroma`;
/// a pixel whose own mask is 0 is copied.
struct BilateralReference {
    enum Variant: CaseIterable {
        case asTheKernel, noRangeWeight, rangeOnRGBDistance, maskIgnoredForNeighbours, colourNotScaled
        static var wrong: [Variant] { allCases.filter { $0 != .asTheKernel } }
    }

    let width: Int, height: Int
    let rgba: [Double]
    let mask: [Float]
    let spatialSigma: Double, rangeSigma: Double, chroma: Double
    let variant: Variant

    private func luma(_ rgb: SIMD3<Double>) -> Double { (rgb * SIMD3(0.2126, 0.7152, 0.0722)).sum() }

    /// The squared difference the range weight reads.
    private func rangeDistance(_ neighbour: SIMD3<Double>, _ centre: SIMD3<Double>) -> Double {
        if variant == .rangeOnRGBDistance { return ((neighbour - centre) * (neighbour - centre)).sum() }
        let difference = luma(neighbour) - luma(centre)
        return difference * difference
    }

    private func pixel(_ x: Int, _ y: Int) -> SIMD3<Double> {
        let at = (y * width + x) * 4
        return SIMD3(rgba[at], rgba[at + 1], rgba[at + 2])
    }

    func filtered() -> [Double] {
        let radius = Int((3 * spatialSigma).rounded(.up))
        var out = rgba
        for y in 0..<height {
            for x in 0..<width where mask[y * width + x] > 0 {
                let centre = pixel(x, y)
                var sum = SIMD3<Double>.zero, total = 0.0
                for dy in -radius...radius {
                    for dx in -radius...radius {
                        let (nx, ny) = (min(max(x + dx, 0), width - 1), min(max(y + dy, 0), height - 1))
                        let neighbour = pixel(nx, ny)
                        let range = variant == .noRangeWeight ? 0 : rangeDistance(neighbour, centre) / (2 * rangeSigma * rangeSigma)
                        let weight = exp(-Double(dx * dx + dy * dy) / (2 * spatialSigma * spatialSigma) - range)
                            * (variant == .maskIgnoredForNeighbours ? 1 : Double(mask[ny * width + nx]))
                        sum += weight * neighbour
                        total += weight
                    }
                }
                let mean = total > 1e-8 ? sum / total : centre
                let change = mean - centre
                let lumaChange = SIMD3(repeating: (change * SIMD3(0.2126, 0.7152, 0.0722)).sum())
                let scale = variant == .colourNotScaled ? 1 : chroma
                let result = centre + lumaChange + scale * (change - lumaChange)
                for c in 0..<3 { out[(y * width + x) * 4 + c] = result[c] }
            }
        }
        return out
    }

    static func maxDifference(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }
}
