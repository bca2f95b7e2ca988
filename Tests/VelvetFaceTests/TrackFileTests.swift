import Foundation
import VelvetFace
import VelvetTestSupport
import XCTest

/// The track file's encoding on its own: every Float back exactly, and each malformed field
/// refused in one line naming the file and the place.
final class TrackFileTests: XCTestCase {
    private func face(seed: UInt64, track: Int) -> Face {
        var generator = SeededGenerator(state: seed)
        let landmarks = (0..<468).map { _ in
            SIMD3(Float.random(in: 0..<1920, using: &generator), Float.random(in: 0..<1080, using: &generator),
                  Float.random(in: -80..<80, using: &generator))
        }
        return Face(landmarks: landmarks, score: Float.random(in: 0.5...1, using: &generator), trackID: track)
    }

    func testEveryFloatComesBackExactly() throws {
        // Values at the edges of what decimals hold: subnormal-free extremes, tiny, negative zero.
        var edge = face(seed: 1, track: 3)
        edge.landmarks[0] = SIMD3(Float.leastNormalMagnitude, 1e-7, -0.0)
        edge.landmarks[1] = SIMD3(0.1, 1919.9999, Float(1).nextDown)
        edge = Face(landmarks: edge.landmarks, score: edge.score, trackID: 3)
        let file = TrackFile(input: "in \"quoted\".mp4", width: 1920, height: 1080,
                             tracker: TrackFile.Tracker(mode: "video", detector: "auto", maxFaces: 32),
                             frames: [TrackFile.Frame(index: 0, time: 0, faces: [face(seed: 7, track: 1), edge], personCoverage: 0.25),
                                      TrackFile.Frame(index: 1, time: 1.0 / 24, faces: []),
                                      TrackFile.Frame(index: 2, time: 2.0 / 24, faces: [face(seed: 9, track: 1)], personCoverage: 0.5)])
        let decoded = try TrackFile.decode(Data(file.encoded().utf8), path: "t.json")
        XCTAssertEqual(decoded, file)
        for (a, b) in zip(decoded.frames.flatMap(\.faces), file.frames.flatMap(\.faces)) {
            XCTAssertTrue(zip(a.landmarks, b.landmarks).allSatisfy { $0.x.bitPattern == $1.x.bitPattern && $0.y.bitPattern == $1.y.bitPattern
                && $0.z.bitPattern == $1.z.bitPattern }, "bit for bit")
        }
    }

    func testMalformedFilesAreRefusedInOneLine() throws {
        let good = TrackFile(input: "in.mp4", width: 1920, height: 1080, frames: [TrackFile.Frame(index: 0, time: 0, faces: [face(seed: 2, track: 1)])])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(good.encoded().utf8)) as? [String: Any])
        func refusal(_ change: (inout [String: Any]) -> Void) throws -> String {
            var edited = object
            change(&edited)
            do {
                _ = try TrackFile.decode(try JSONSerialization.data(withJSONObject: edited), path: "t.json")
                return "accepted"
            } catch let error as TrackFileError {
                XCTAssertFalse(error.description.contains("\n"))
                return error.description
            }
        }
        func frames(_ change: @escaping (inout [String: Any]) -> Void) -> (inout [String: Any]) -> Void {
            { root in
                var list = root["frames"] as! [[String: Any]]
                change(&list[0])
                root["frames"] = list
            }
        }
        func firstFace(_ change: @escaping (inout [String: Any]) -> Void) -> (inout [String: Any]) -> Void {
            frames { frame in
                var faces = frame["faces"] as! [[String: Any]]
                change(&faces[0])
                frame["faces"] = faces
            }
        }
        XCTAssertEqual(try refusal { _ in }, "accepted")
        XCTAssertEqual(try refusal { $0["format"] = "other" }, "t.json: not a track file (\"format\" must be \"velvet-tracks\")")
        XCTAssertEqual(try refusal { $0["version"] = 2 }, "t.json: track file version 2 is not supported (this velvet reads version 1)")
        XCTAssertEqual(try refusal { $0["version"] = nil }, "t.json: no \"version\"")
        XCTAssertEqual(try refusal { $0["width"] = -1 }, "t.json: \"width\" and \"height\" must be positive integers")
        XCTAssertEqual(try refusal(frames { $0["frame"] = 1 }), "t.json: frame 0: \"frame\" must be 0 (frames in order from 0)")
        XCTAssertEqual(try refusal(frames { $0["faces"] = nil }), "t.json: frame 0: no \"faces\" array")
        XCTAssertEqual(try refusal(firstFace { $0["track"] = 0 }), "t.json: frame 0, face 0: \"track\" must be a positive integer")
        XCTAssertEqual(try refusal(firstFace { $0["score"] = 1.5 }), "t.json: frame 0, face 0: \"score\" must be a number in 0...1")
        XCTAssertEqual(try refusal(firstFace { $0["landmarks"] = [[1, 2, 3]] }),
                       "t.json: frame 0, face 0: \"landmarks\" must be 468 points")
        XCTAssertEqual(try refusal(firstFace { face in
            var points = face["landmarks"] as! [[Any]]
            points[7] = [1, 2]
            face["landmarks"] = points
        }), "t.json: frame 0, face 0: landmark 7 must be [x, y, z], three numbers within ±1e6")
        XCTAssertEqual(try refusal(frames { frame in
            let faces = frame["faces"] as! [[String: Any]]
            frame["faces"] = faces + faces
        }), "t.json: frame 0, face 1: track 1 twice in one frame")
        XCTAssertEqual(try refusal(firstFace { face in
            face["landmarks"] = Array(repeating: [5.0, 5.0, 0.0], count: 468)
        }), "t.json: frame 0, face 0: the face oval is under 4 px a side (landmarks collapsed)")
        XCTAssertEqual(try refusal(frames { frame in
            let face = (frame["faces"] as! [[String: Any]])[0]
            frame["faces"] = (1...65).map { track -> [String: Any] in var copy = face; copy["track"] = track; return copy }
        }), "t.json: frame 0: 65 faces, more than the 64 a frame can have")
        XCTAssertThrowsError(try TrackFile.decode(Data("{\"format\":".utf8), path: "t.json")) {
            XCTAssertEqual(($0 as? TrackFileError)?.description,
                           "t.json: not a track file (not valid JSON: cut short, or a number JSON has not, such as NaN)")
        }
        XCTAssertThrowsError(try TrackFile.decode(Data("[1, 2]".utf8), path: "t.json")) {
            XCTAssertEqual(($0 as? TrackFileError)?.description, "t.json: not a track file (not a JSON object)")
        }
    }
}

