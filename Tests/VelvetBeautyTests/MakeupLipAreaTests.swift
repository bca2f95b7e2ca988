import Foundation
@testable import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import XCTest

/// On CPU devices makeup paints the lip area in a pass of its own (`makeup_apply.comp`'s
/// PART): the blush pass over the region leaves it alone, the full kernel runs over it. Both
/// ways are run here on one device and must give the same bytes, into another image and in
/// place, with every lip blend and with blush patches large enough to reach the lips.
final class MakeupLipAreaTests: GPUTestCase {
    func testTheLipAreaApartGivesTheSameBytes() throws {
        let fixture = try FaceFixture.load("grace_hopper")
        let (width, height) = (fixture.width, fixture.height)
        let painters = try [false, true].map { try MakeupPaint(context: context, faceTableTexels: nil, lipAreaApart: $0) }
        for blend in [MakeupSettings.LipBlend.natural, .multiply, .softLight] {
            for blushSize: Float in [0.13, 0.3] {
                var settings = MakeupSettings(lipstick: .init(strength: 0.8, blend: blend))
                settings.blush.strength = 0.6
                settings.blush.size = blushSize
                let geometry = MakeupGeometry(faces: fixture.faces, settings: settings)
                let region = geometry.region(width: width, height: height)
                let lipArea = geometry.lipArea(width: width, height: height).intersection(region)
                XCTAssertFalse(lipArea.isEmpty)
                XCTAssertLessThan(lipArea.width * lipArea.height, region.width * region.height / 4, "the lips are a small part")
                for inPlace in [false, true] {
                    let runs = try painters.map { painter in try paint(painter, fixture, settings, inPlace: inPlace) }
                    let label = "\(blend) blush \(blushSize) in place \(inPlace)"
                    XCTAssertEqual(runs[0].region, runs[1].region, label)
                    XCTAssertTrue(runs[0].output == runs[1].output, "the same bytes: \(label)")
                    guard !inPlace else { continue } // (in place, the run's input is its output)
                    // Both passes had work: pixels changed inside the lip area and outside it.
                    let changed = changedPixels(runs[1])
                    XCTAssertTrue(changed.contains { lipArea.contains(x: $0 % width, y: $0 / width) }, label)
                    XCTAssertTrue(changed.contains { !lipArea.contains(x: $0 % width, y: $0 / width) }, label)
                }
            }
        }
    }

    private func paint(_ painter: MakeupPaint, _ fixture: FaceFixture, _ settings: MakeupSettings, inPlace: Bool) throws -> StageRun {
        try StageRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height) { recorder, image, destination in
            if inPlace {
                let region = try painter.record(on: recorder, image: image, faces: fixture.faces, settings: settings, destination: image)
                try recorder.copy(image, to: destination)
                return region
            }
            return try painter.record(on: recorder, image: image, faces: fixture.faces, settings: settings, destination: destination)
        }
    }

    /// Indices of the pixels whose rgba16f texel the run changed.
    private func changedPixels(_ run: StageRun) -> [Int] {
        stride(from: 0, to: run.output.count, by: 8).compactMap { offset in
            run.output[offset..<offset + 8] == run.input[offset..<offset + 8] ? nil : offset / 8
        }
    }
}
