import Foundation
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// Effects that change part of a frame: converting only that region back must give the
/// same output as converting the whole frame, and leave everything else bit-exact.
final class ChangedRegionTests: GPUTestCase {
    /// Paints a flat colour into a rectangle of the output (by uploading a whole image).
    private final class PaintBox: FrameEffect, @unchecked Sendable {
        let box: PixelRegion
        let reportWhole: Bool
        init(box: PixelRegion, reportWhole: Bool) { (self.box, self.reportWhole) = (box, reportWhole) }

        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            // Read back nothing: build the painted image from a download of the input.
            let width = frame.input.width, height = frame.input.height
            var halves = [Float16](repeating: 0, count: width * height * 4)
            for y in box.y..<(box.y + box.height) {
                for x in box.x..<(box.x + box.width) {
                    let index = (y * width + x) * 4
                    (halves[index], halves[index + 1], halves[index + 2], halves[index + 3]) = (0.9, 0.2, 0.4, 1)
                }
            }
            // Outside the box the output must stay the input: paint onto a copy of it.
            let painted = try GPUImage(context: frame.input.context, width: width, height: height, format: .rgba16f)
            try halves.withUnsafeBytes { try recorder.upload($0, to: painted) }
            try recorder.copy(frame.input, to: frame.output)
            try recorder.copyRegion(from: painted, to: frame.output, x: box.x, y: box.y, width: box.width, height: box.height)
            return reportWhole ? .whole : .region(box)
        }
    }

    private func render(_ input: String, _ output: String, whole: Bool) throws {
        var settings = EncoderSettings()
        settings.crf = 0
        settings.preset = "ultrafast"
        let effect = PaintBox(box: PixelRegion(x: 21, y: 13, width: 30, height: 17), reportWhole: whole)
        _ = try VideoRenderer(context: context).render(input: input, output: output, settings: settings, effect: effect)
    }

    func testRegionConversionEqualsWholeFrameConversion() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.mkv"), rotated = scratch.path("rotated.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10", "-t", "0.3", "-c:v", "libx264", "-crf", "0", plain])
        try Tool.ffmpeg(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated])
        for input in [plain, rotated] {
            let region = scratch.path("region.mkv"), whole = scratch.path("whole.mkv")
            try render(input, region, whole: false)
            try render(input, whole, whole: true)
            XCTAssertEqual(try Tool.frameMD5s(region), try Tool.frameMD5s(whole), input)
            XCTAssertNotEqual(try Tool.frameMD5s(region), try Tool.frameMD5s(input), "the box must show")
        }
    }
}
