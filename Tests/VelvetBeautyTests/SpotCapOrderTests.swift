import Foundation
import VelvetGPU
import VelvetKernels
import VelvetTestSupport
import XCTest

/// The spot cap (`beauty_spot_cap.comp`) reads a peak list the GPU's atomics filled in any
/// order: which spots it keeps must not depend on that order, or one frame renders
/// differently from run to run (it did on the H200, 41 of 300 frames between two runs). A
/// cap that does not bind changes nothing.
final class SpotCapOrderTests: GPUTestCase {
    static let side = 24

    /// Four peaks of one rank value at the corners of a square, a cap of 2, every pixel
    /// filled: the two upper peaks are kept (ties go to the upper, then the left), a pixel
    /// as near to two peaks goes to the higher ranked, and the result is the same for every
    /// order of the list.
    func testTiesAreBrokenByPositionWhateverTheListOrder() throws {
        let corners: [SIMD2<Float>] = [[5.5, 5.5], [17.5, 5.5], [5.5, 17.5], [17.5, 17.5]]
        let orders = [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]]
        let results = try orders.map { order in try capped(peaks: order.map { corners[$0] }, value: 0.5, maxCount: 2) }
        for (order, result) in zip(orders.dropFirst(), results.dropFirst()) {
            XCTAssertEqual(zip(result, results[0]).filter { $0 != $1 }.count, 0, "pixels that differ with list order \(order)")
        }
        let kept = results[0]
        func isKept(_ x: Int, _ y: Int) -> Bool { kept[y * Self.side + x] }
        XCTAssertTrue(isKept(5, 5) && isKept(17, 5), "the upper peaks are kept")
        XCTAssertFalse(isKept(5, 17) || isKept(17, 17), "the lower peaks are undone")
        // Pixel centre (11.5, 11.5) is as near to all four: it goes to the upper left peak, kept.
        XCTAssertTrue(isKept(11, 11))
        // (11.5, 17.5) is as near to both lower peaks, both undone.
        XCTAssertFalse(isKept(11, 17))
    }

    /// With as many peaks as the cap keeps, or fewer, the rank and cap passes get no
    /// workgroups and every fill stays; one peak more and the cap undoes some.
    func testACapThatDoesNotBindKeepsEveryFill() throws {
        let corners: [SIMD2<Float>] = [[5.5, 5.5], [17.5, 5.5], [5.5, 17.5], [17.5, 17.5]]
        for maxCount in [4, 5] {
            var groups: [UInt32] = []
            XCTAssertTrue(try capped(peaks: corners, value: 0.5, maxCount: maxCount, groups: &groups).allSatisfy { $0 }, "cap \(maxCount)")
            XCTAssertEqual(groups, [0, 1, 1, 0, 0, 1, 1, 0], "cap \(maxCount): no workgroups for the rank and cap passes")
        }
        var groups: [UInt32] = []
        XCTAssertFalse(try capped(peaks: corners, value: 0.5, maxCount: 3, groups: &groups).allSatisfy { $0 }, "cap 3 of 4 peaks")
        XCTAssertEqual(groups, [1, 1, 1, 0, 3, 1, 1, 0], "one workgroup of peaks, the fills' three")
    }

    /// Runs the cap over a frame filled everywhere (every pixel in the fill list the cap is
    /// dispatched over); true where a pixel's fill is kept.
    private func capped(peaks: [SIMD2<Float>], value: Float, maxCount: Int) throws -> [Bool] {
        var groups: [UInt32] = []
        return try capped(peaks: peaks, value: value, maxCount: maxCount, groups: &groups)
    }

    /// `groups`: the rank and cap passes' indirect dispatches as the first pass wrote them.
    private func capped(peaks: [SIMD2<Float>], value: Float, maxCount: Int, groups: inout [UInt32]) throws -> [Bool] {
        let side = Self.side
        let source = try GPUImage(context: context, width: side, height: side, format: .rgba16f)
        let fixed = try GPUImage(context: context, width: side, height: side, format: .rgba16f)
        let list = try GPUBuffer(context: context, size: 16 + 16 * peaks.count)
        let grey = [Float16](repeating: 0.5, count: side * side * 4)
        let filled = (0..<(side * side)).flatMap { _ in [0.6, 0.6, 0.6, 1] as [Float16] }
        let header: [UInt32] = [UInt32(peaks.count), UInt32(peaks.count), 0, 0]
        let entries: [Float] = peaks.flatMap { [$0.x, $0.y, value, 0] }
        // beauty_pixel_list.glsl: the indirect dispatch's workgroups (256 pixels each), the count, x | y << 16.
        let pixels = side * side
        let fillHead: [UInt32] = [UInt32((pixels + 255) / 256), 1, 1, UInt32(pixels)]
        let fillPixels: [UInt32] = (0..<pixels).map { UInt32($0 % side) | UInt32($0 / side) << 16 }
        let fills = try GPUBuffer(context: context, size: 16 + 4 * pixels)
        let recorder = try CommandRecorder(context: context)
        try grey.withUnsafeBytes { try recorder.upload($0, to: source) }
        try filled.withUnsafeBytes { try recorder.upload($0, to: fixed) }
        try header.withUnsafeBytes { try recorder.upload($0, to: list) }
        try entries.withUnsafeBytes { try recorder.upload($0, to: list, offset: 16) }
        try fillHead.withUnsafeBytes { try recorder.upload($0, to: fills) }
        try fillPixels.withUnsafeBytes { try recorder.upload($0, to: fills, offset: 16) }
        // The cap's three passes (beauty_spot_cap.comp): size the next two, rank, cap.
        let state = try GPUBuffer(context: context, size: 32 + 4 * peaks.count)
        let push = KernelLibrary.BeautySpotCapPush(linkRadius: 100, maxCount: Int32(maxCount))
        let bindings: [GPUBinding] = [.sampledImage(source, .nearest), .storageImage(fixed), .buffer(list), .buffer(fills),
                                      .texels(list, offset: 16, size: 16 * peaks.count), .buffer(state)]
        func pass(_ index: Int32) throws -> TypedKernel<KernelLibrary.BeautySpotCapPush> {
            try TypedKernel(context: context, specialization: ["PASS": .int(index)])
        }
        recorder.dispatch(try pass(0), bindings, push: push, covering: 1, 1)
        recorder.dispatch(try pass(1), bindings, push: push, groupsIn: state, offset: 0)
        recorder.dispatch(try pass(2), bindings, push: push, groupsIn: state, offset: 16)
        let readback = try recorder.download(fixed)
        let stateReadback = try recorder.download(state)
        try recorder.submit().wait()
        groups = Array(stateReadback.raw.bindMemory(to: UInt32.self).prefix(8))
        let halves = readback.raw.bindMemory(to: Float16.self)
        return (0..<(side * side)).map { Float(halves[$0 * 4 + 3]) > 0 }
    }
}
