import Foundation
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// Synthetic clips with known motion are what the tracker and demo tests stand on.
final class ClipSynthesizerTests: GPUTestCase {
    func testFramesShowThePhotoUnderTheTransform() throws {
        let scratch = try Scratch()
        let photoPath = scratch.path("photo.png"), clip = scratch.path("clip.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=128x96", "-frames:v", "1", photoPath])
        let photo = try ImageLoader.load(photoPath, context: context)
        XCTAssertEqual(photo.width, 128)
        var settings = EncoderSettings()
        settings.crf = 0
        settings.pixelFormat = "yuv444p"
        try ClipSynthesizer(context: context).write(photo: photo, to: clip, width: 128, height: 96, frames: 3, frameRate: 10,
                                                    settings: settings) { index in
            SimilarityTransform(translation: (x: Double(index * 16), y: 0))
        }
        XCTAssertEqual(try Tool.probe(clip, "stream=width,height"), "128,96")
        XCTAssertEqual(try Tool.probe(clip, "frame=pts_time"), "0.000000\n0.100000\n0.200000")
        // Frame 2 is the photo moved 32 px right: compare the overlapping columns, both as
        // BT.709 limited-range 4:4:4 (the clip's tags).
        let shifted = scratch.path("shifted.mkv"), moved = scratch.path("moved.mkv")
        try Tool.ffmpeg(["-i", photoPath, "-vf", "crop=96:96:0:0,scale=out_color_matrix=bt709:out_range=tv,format=yuv444p",
                         "-c:v", "ffv1", shifted])
        try Tool.ffmpeg(["-i", clip, "-vf", "select=eq(n\\,2),crop=96:96:32:0", "-frames:v", "1", "-c:v", "ffv1", moved])
        XCTAssertGreaterThan(try Tool.psnr(moved, shifted), 35)
    }

    func testSimilarityTransformMapsPoints() {
        let motion = SimilarityTransform(scale: 2, rotation: .pi / 2, translation: (x: 5, y: -3))
        // The photo centre lands at the frame centre plus the translation.
        let centre = motion.apply((50, 40), photoSize: (100, 80), frameSize: (200, 160))
        XCTAssertEqual(centre.x, 105, accuracy: 1e-9)
        XCTAssertEqual(centre.y, 77, accuracy: 1e-9)
        // A point right of the centre turns a quarter clockwise (to below it) and doubles its distance.
        let right = motion.apply((60, 40), photoSize: (100, 80), frameSize: (200, 160))
        XCTAssertEqual(right.x, 105, accuracy: 1e-9)
        XCTAssertEqual(right.y, 97, accuracy: 1e-9)
    }
}
