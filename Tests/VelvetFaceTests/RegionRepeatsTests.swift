import Foundation
@testable import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// A face region repeats only if every pixel in it does, whether its pixels are compared all
/// at once (GPUs) or walked a column at a time, stopping at the first change (CPU devices).
final class RegionRepeatsTests: GPUTestCase {
    func testOneChangedPixelAnywhereInTheRegionIsFoundBothWays() throws {
        let width = 160, height = 120
        // Taller than one walk, so a change low in the region is past the first walk's rows.
        let region = PixelRegion(x: 13, y: 7, width: 101, height: RegionRepeats.walkRows * 2 + 9)
        var base = [Float](repeating: 0, count: width * height * 4)
        for i in base.indices { base[i] = Float((i * 7919) % 1000) / 1000 }
        let changes: [(x: Int, y: Int, inRegion: Bool)] = [
            (region.x, region.y, true), (region.x + region.width - 1, region.y + region.height - 1, true),
            (region.x + 50, region.y + RegionRepeats.walkRows, true), (region.x + 9, region.y + RegionRepeats.walkRows - 1, true),
            (region.x + region.width, region.y + 3, false),
            (region.x + 4, region.y + region.height, false),
        ]
        for walks in [false, true] {
            XCTAssertEqual(try repeats(base, base, width, height, region, walks: walks), true, "identical frames, walks \(walks)")
            for change in changes {
                var next = base
                next[(change.y * width + change.x) * 4 + 1] += 1 / 1024
                XCTAssertEqual(try repeats(base, next, width, height, region, walks: walks), !change.inRegion,
                               "one pixel changed at \(change.x), \(change.y), walks \(walks)")
            }
        }
    }

    private func repeats(_ first: [Float], _ second: [Float], _ width: Int, _ height: Int, _ region: PixelRegion,
                         walks: Bool) throws -> Bool {
        let repeats = try RegionRepeats(context: context, capacity: 2, walksColumns: walks)
        var pending: RegionRepeats.Pending?
        for frame in [first, second] {
            let image = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
            let recorder = try CommandRecorder(context: context)
            try frame.withUnsafeBytes { try recorder.upload($0, to: image) }
            pending = try repeats.record(on: recorder, image: image, regions: [region])
            try recorder.submit().wait()
        }
        return RegionRepeats.finding(pending, count: 1).repeated[0]
    }
}
