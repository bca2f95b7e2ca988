import CFFmpeg
import VelvetGPU
@testable import VelvetMedia
import VelvetTestSupport
import XCTest

/// The working image -> planes conversion (`rgb_to_yuv.comp`, direct mode) against the same
/// formula on the CPU, for every chroma block the kernel is specialised for (4:2:0, 4:2:2,
/// 4:4:4, semi-planar, grey) and both sitings (co-sited chroma filtered [1 2 1] across the
/// even columns, centred chroma a box), on a frame of odd size (the last block cut by the
/// edge) and random R'G'B', some outside 0...1.
final class PlaneConversionTests: GPUTestCase {
    func testEveryChromaBlockAndSitingMatchesTheFormula() throws {
        let width = 37, height = 23
        var generator = SeededGenerator(state: 5)
        let rgb = (0..<(width * height)).map { _ in SIMD3<Double>((0..<3).map { _ in Double.random(in: -0.1...1.1, using: &generator) }) }
        let working = try GPUImage(context: context, width: width, height: height, format: .rgba16f)
        let halves: [Float16] = rgb.flatMap { [Float16(Float($0.x)), Float16(Float($0.y)), Float16(Float($0.z)), 1] }
        let exact = halves.map { Double(Float($0)) }
        let converter = try ColorConverter(context: context)
        for format in [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P, AV_PIX_FMT_NV12, AV_PIX_FMT_GRAY8] {
            let layout = try XCTUnwrap(VideoPlaneLayout(format))
            for location in [AVCHROMA_LOC_LEFT, AVCHROMA_LOC_CENTER] {
                let color = ColorDescription(matrix: .bt709, fullRange: false, primaries: 1, transfer: 1, colorSpace: 1,
                                             chromaLocation: Int32(location.rawValue))
                let planes = try converter.makePlanes(layout, width: width, height: height)
                let recorder = try CommandRecorder(context: context)
                try halves.withUnsafeBytes { try recorder.upload($0, to: working) }
                try converter.recordToPlanes(processed: working, original: nil, output: planes, layout: layout, color: color,
                                             orientation: .identity, on: recorder)
                let readbacks = try planes.map { try recorder.download($0) }
                try recorder.submit().wait()
                let label = "\(layout.name), \(color.chromaCositedX ? "co-sited" : "centred")"
                let expected = Self.expectedPlanes(exact, width: width, height: height, layout: layout, color: color)
                for (index, readback) in readbacks.enumerated() {
                    let got = readback.bytes.map(Int.init)
                    XCTAssertEqual(got.count, expected[index].count, "\(label): plane \(index) size")
                    let worst = zip(got, expected[index]).map { abs($0 - $1) }.max() ?? 0
                    XCTAssertLessThanOrEqual(worst, 1, "\(label): plane \(index) against the formula")
                }
            }
        }
    }

    /// 8-bit codes of each plane (interleaved for semi-planar chroma), in double precision.
    private static func expectedPlanes(_ rgba: [Double], width: Int, height: Int, layout: VideoPlaneLayout,
                                       color: ColorDescription) -> [[Int]] {
        let range = color.range(bitDepth: 8), rows = color.fromRGB
        func ypbpr(_ x: Int, _ y: Int) -> [Double] {
            let i = (y * width + x) * 4
            return rows.map { $0[0] * rgba[i] + $0[1] * rgba[i + 1] + $0[2] * rgba[i + 2] }
        }
        func code(_ value: Double) -> Int { Int((min(max(value, 0), 1) * 255).rounded()) }
        var luma: [Int] = []
        for y in 0..<height { for x in 0..<width { luma.append(code(ypbpr(x, y)[0] / range.lumaScale + range.lumaOffset)) } }
        guard layout.planes.count > 1 else { return [luma] }
        let (shiftX, shiftY) = layout.chromaShift
        let size = layout.planeSize(1, width: width, height: height)
        let cosited = color.chromaCositedX && shiftX == 1
        var pb: [Int] = [], pr: [Int] = []
        for sy in 0..<size.height {
            for sx in 0..<size.width {
                var sum = [0.0, 0.0], weights = 0.0
                for j in 0..<(1 << shiftY) {
                    for i in (cosited ? -1 : 0)...(cosited ? 1 : (1 << shiftX) - 1) {
                        let x = min(max((sx << shiftX) + i, 0), width - 1), y = min(max((sy << shiftY) + j, 0), height - 1)
                        let weight = cosited && i == 0 ? 2.0 : 1.0
                        let value = ypbpr(x, y)
                        sum[0] += weight * value[1]
                        sum[1] += weight * value[2]
                        weights += weight
                    }
                }
                pb.append(code(sum[0] / weights / range.chromaScale + range.chromaOffset))
                pr.append(code(sum[1] / weights / range.chromaScale + range.chromaOffset))
            }
        }
        if layout.planes.count == 2 { return [luma, zip(pb, pr).flatMap { [$0, $1] }] }
        return [luma, pb, pr]
    }
}
