import Foundation
import VelvetBeauty
import VelvetFace
import VelvetTestSupport
import XCTest

/// Synthetic scenes with known truth (M16): the test photos scaled, turned and placed by
/// ffmpeg, so every face's true landmark box is MediaPipe's mesh of the photo
/// (Tests/Fixtures/NAME.face.json) carried through the same transform. Run through the
/// command line with its defaults, as a user runs it.
final class GroupSceneTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A test photo and MediaPipe's landmarks of its face.
    struct Photo {
        let path: String
        let width: Float, height: Float
        let landmarks: [SIMD2<Float>]

        static func load(_ name: String, file: String) throws -> Photo {
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: repository.appendingPathComponent(
                "Tests/Fixtures/\(name).face.json"))) as! [String: Any]
            let face = (json["faces"] as! [[String: Any]])[0]
            let points = (face["landmarks"] as! [[Double]]).map { SIMD2(Float($0[0]), Float($0[1])) }
            return Photo(path: repository.appendingPathComponent("test-assets/\(file)").path,
                         width: Float(json["width"] as! Int), height: Float(json["height"] as! Int), landmarks: points)
        }

        var interOcularDistance: Float { length(landmarks[33] - landmarks[263]) }
    }

    /// Where a photo's face lands in a scene: the photo cropped to a square around its face
    /// (or whole, with the body and background it has), turned clockwise by `quarterTurns`,
    /// scaled so its IOD is `iod`, placed at (x, y).
    struct Placement {
        let photo: Photo
        let iod: Float
        let quarterTurns: Int
        let x: Int, y: Int
        var wholePhoto = false

        /// The crop: a square of 3.2 IOD around the landmarks' centre, inside the photo.
        var crop: (x: Int, y: Int, width: Int, height: Int) {
            if wholePhoto { return (0, 0, Int(photo.width), Int(photo.height)) }
            let box = FaceBox(bounding: photo.landmarks)
            let side = Int(min(3.2 * photo.interOcularDistance, photo.width, photo.height))
            let x = min(max(Int(box.centre.x) - side / 2, 0), Int(photo.width) - side)
            let y = min(max(Int(box.centre.y) - side / 2, 0), Int(photo.height) - side)
            return (x, y, side, side)
        }

        /// The scaled crop's size in the scene, before turning.
        var size: (width: Int, height: Int) {
            let scale = iod / photo.interOcularDistance
            return (Int((Float(crop.width) * scale).rounded()), Int((Float(crop.height) * scale).rounded()))
        }

        /// ffmpeg's filter chain from the photo to the placed crop.
        var filter: String {
            let turn = ["", ",transpose=clock", ",hflip,vflip", ",transpose=cclock"][quarterTurns % 4]
            return "crop=\(crop.width):\(crop.height):\(crop.x):\(crop.y),scale=\(size.width):\(size.height)\(turn)"
        }

        /// The face's true landmarks in the scene (pixel-edge coordinates, as the mesh gives them).
        var landmarks: [SIMD2<Float>] {
            let scale = SIMD2(Float(size.width) / Float(crop.width), Float(size.height) / Float(crop.height))
            let (w, h) = (Float(size.width), Float(size.height))
            return photo.landmarks.map { point in
                let p = (point - SIMD2(Float(crop.x), Float(crop.y))) * scale
                let turned: SIMD2<Float>
                switch quarterTurns % 4 {
                case 1: turned = SIMD2(h - p.y, p.x)
                case 2: turned = SIMD2(w - p.x, h - p.y)
                case 3: turned = SIMD2(p.y, w - p.x)
                default: turned = p
                }
                return turned + SIMD2(Float(x), Float(y))
            }
        }
    }

    /// Writes the scene (grey background) as a PNG; returns its faces' true landmarks.
    func makeScene(_ placements: [Placement], width: Int, height: Int, path: String) throws -> [[SIMD2<Float>]] {
        var arguments = ["-f", "lavfi", "-i", "color=c=0x6e6e6e:s=\(width)x\(height):d=1"]
        var graph = ""
        var last = "0:v"
        for (index, placement) in placements.enumerated() {
            arguments += ["-i", placement.photo.path]
            graph += "[\(index + 1):v]\(placement.filter)[f\(index)];[\(last)][f\(index)]overlay=\(placement.x):\(placement.y)[s\(index)];"
            last = "s\(index)"
        }
        arguments += ["-filter_complex", String(graph.dropLast()), "-map", "[\(last)]", "-frames:v", "1", path]
        try Tool.ffmpeg(arguments)
        return placements.map(\.landmarks)
    }

    /// `velvet analyze` with its defaults: each face's landmarks.
    func analyze(_ path: String, extra: [String] = []) throws -> [[SIMD2<Float>]] {
        let result = try Tool.run(Tool.velvet, ["analyze", path, "--json", "--quiet"] + extra,
                                  environment: ["VELVET_VALIDATION": "1",
                                                "VELVET_MODELS_DIR": Self.repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        let faces = try XCTUnwrap((json["frames"] as? [[String: Any]])?.first?["faces"] as? [[String: Any]])
        return try faces.map { face in
            try XCTUnwrap(face["landmarks"] as? [[Double]]).map { SIMD2(Float($0[0]), Float($0[1])) }
        }
    }

    /// Every true face found (M16), each found box within 0.1 IOD of the true one, nothing else found.
    func checkFound(_ found: [[SIMD2<Float>]], truth: [[SIMD2<Float>]], _ label: String,
                    file: StaticString = #filePath, line: UInt = #line) {
        let trueBoxes = truth.map { FaceBox(bounding: $0) }, foundBoxes = found.map { FaceBox(bounding: $0) }
        let recall = QualityMetrics.facesFound(found: foundBoxes, present: trueBoxes)
        print("[M16] \(label): found \(recall.found) of \(recall.present), \(found.count) face(s) reported")
        XCTAssertEqual(recall.found, recall.present, "\(label): every face found (M16)", file: file, line: line)
        XCTAssertEqual(found.count, truth.count, "\(label): no face found twice or where there is none", file: file, line: line)
        for (truthIndex, foundIndex) in recall.matches {
            let iod = length(truth[truthIndex][33] - truth[truthIndex][263])
            let a = trueBoxes[truthIndex], b = foundBoxes[foundIndex]
            let error = max(abs(a.x - b.x), abs(a.y - b.y), abs(a.x + a.width - b.x - b.width), abs(a.y + a.height - b.y - b.height))
            XCTAssertLessThanOrEqual(error, 0.1 * iod, "\(label) face \(truthIndex): box within 0.1 IOD (\(error) px, IOD \(iod))",
                                     file: file, line: line)
        }
    }

    private func photos() throws -> [Photo] {
        [try Photo.load("grace_hopper", file: "grace_hopper.jpg"), try Photo.load("astronaut", file: "astronaut.png")]
    }

    /// Twelve faces of IOD 24 to 68 px in a 1280x720 frame: the whole-frame detectors find the
    /// larger ones, the tiles the small ones.
    private func groupPlacements() throws -> [Placement] {
        let photos = try photos()
        return (0..<12).map { index in
            let iod = Float(24 + 4 * index)
            return Placement(photo: photos[index % 2], iod: iod, quarterTurns: 0, x: 20 + (index % 4) * 315, y: 10 + (index / 4) * 238)
        }
    }

    func testTwelveFacesOfManySizesAreAllFound() throws {
        let scratch = try Scratch()
        let scene = scratch.path("group.png")
        let truth = try makeScene(try groupPlacements(), width: 1280, height: 720, path: scene)
        checkFound(try analyze(scene), truth: truth, "12-face group")
    }

    /// A photo taken sideways: the whole group turned by 90 degrees (no orientation tag).
    func testAGroupTakenSidewaysIsFound() throws {
        let scratch = try Scratch()
        let upright = scratch.path("upright.png"), sideways = scratch.path("sideways.png")
        let truth = try makeScene(try groupPlacements(), width: 1280, height: 720, path: upright)
        try Tool.ffmpeg(["-i", upright, "-vf", "transpose=clock", sideways])
        // transpose=clock: (x, y) -> (720 - y, x).
        let turned = truth.map { $0.map { SIMD2(720 - $0.y, $0.x) } }
        checkFound(try analyze(sideways), truth: turned, "12-face group turned 90 degrees")
    }

    /// One face turned by 90, 180 and 270 degrees, each alone in a frame.
    func testTurnedFacesAreFound() throws {
        let scratch = try Scratch()
        let grace = try photos()[0]
        for turns in 1...3 {
            let scene = scratch.path("turned\(turns).png")
            let truth = try makeScene([Placement(photo: grace, iod: 70, quarterTurns: turns, x: 180, y: 100)],
                                      width: 640, height: 480, path: scene)
            checkFound(try analyze(scene), truth: truth, "face turned \(90 * turns) degrees")
        }
    }

    /// The whole photo, uniform and all, turned by 90, 180 and 270 degrees at four sizes: a
    /// turned face's parts (an upside-down face's mouth and chin, a sideways face's cheek and
    /// collar) can be read as an upright face; the face found turned around it replaces that
    /// reading (21 of these 12 scenes and 24 like them were misread or found twice before).
    func testTurnedFacesWithTheirBodiesAreReadTheRightWayUp() throws {
        let scratch = try Scratch()
        let grace = try photos()[0]
        for turns in 1...3 {
            for iod in [36, 50, 64, 110] as [Float] {
                let scene = scratch.path("turned\(turns)-\(Int(iod)).png")
                let truth = try makeScene([Placement(photo: grace, iod: iod, quarterTurns: turns, x: 300, y: 100, wholePhoto: true)],
                                          width: 1280, height: 720, path: scene)
                checkReadTheRightWayUp(try analyze(scene), truth: truth[0], "whole photo turned \(90 * turns) degrees, IOD \(Int(iod))")
            }
        }
    }

    /// One face found, turned as the true face is (roll within 20 degrees), its box over the
    /// true box's by an IoU of 0.5 or more. (Not `checkFound`'s 0.1 IOD: the mesh of a sideways
    /// face with its body, at 64 px IOD, is 11 px short of MediaPipe's upright mesh of it.)
    func checkReadTheRightWayUp(_ found: [[SIMD2<Float>]], truth: [SIMD2<Float>], _ label: String,
                                file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(found.count, 1, "\(label): one face", file: file, line: line)
        guard let face = found.first else { return }
        func roll(_ points: [SIMD2<Float>]) -> Float {
            let eyes = points[263] - points[33]
            return atan2f(eyes.y, eyes.x)
        }
        let turn = abs(remainderf(roll(face) - roll(truth), 2 * .pi)) * 180 / .pi
        XCTAssertLessThanOrEqual(turn, 20, "\(label): read the right way up (\(turn) degrees off)", file: file, line: line)
        let overlap = FaceBox(bounding: face).intersectionOverUnion(FaceBox(bounding: truth))
        XCTAssertGreaterThanOrEqual(overlap, 0.5, "\(label): on the face (IoU \(overlap))", file: file, line: line)
    }

    /// A pattern at the edge of what the tiles look for is not a face: a 13-px "face" on the
    /// hem of a uniform (found by a tile before; tiles look for faces of 24 px and up).
    func testNoFaceOnTheHemOfAUniform() throws {
        let scratch = try Scratch()
        let grace = try photos()[0]
        let scene = scratch.path("hem.png")
        var arguments = ["-f", "lavfi", "-i", "color=c=white:s=1100x700:d=1", "-i", grace.path]
        arguments += ["-filter_complex", "[1:v]scale=256:300[p];[0:v][p]overlay=400:200", "-frames:v", "1", scene]
        try Tool.ffmpeg(arguments)
        let scale = SIMD2<Float>(256 / grace.width, 300 / grace.height)
        let truth = [grace.landmarks.map { $0 * scale + SIMD2(400, 200) }]
        checkFound(try analyze(scene), truth: truth, "a 256x300 portrait on white")
    }

    /// A face at 30 px IOD and one at 600 px IOD.
    func testFacesAt30And600PixelsIOD() throws {
        let scratch = try Scratch()
        let grace = try photos()[0]
        let small = scratch.path("small.png"), large = scratch.path("large.png")
        let smallTruth = try makeScene([Placement(photo: grace, iod: 30, quarterTurns: 0, x: 500, y: 300)],
                                       width: 1280, height: 720, path: small)
        checkFound(try analyze(small), truth: smallTruth, "30 px IOD in 1280x720")
        let largeTruth = try makeScene([Placement(photo: grace, iod: 600, quarterTurns: 0, x: 40, y: 40)],
                                       width: 2000, height: 2000, path: large)
        checkFound(try analyze(large), truth: largeTruth, "600 px IOD in 2000x2000")
    }

    /// Every found face is treated (its oval changed) and the background stays bit-exact
    /// (M3: nothing changes farther than 1 IOD outside any face oval), at the default preset.
    func testEveryFaceOfTheGroupIsTreated() throws {
        let scratch = try Scratch()
        let scene = scratch.path("group.png"), output = scratch.path("out.png")
        _ = try makeScene(try groupPlacements(), width: 1280, height: 720, path: scene)
        let faces = try analyze(scene)
        XCTAssertEqual(faces.count, 12)
        let result = try Tool.run(Tool.velvet, ["render", scene, "-o", output, "--quiet"],
                                  environment: ["VELVET_VALIDATION": "1",
                                                "VELVET_MODELS_DIR": Self.repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let before = try rgba(scene, width: 1280, height: 720), after = try rgba(output, width: 1280, height: 720)
        let geometry = try faces.map { try BeautyFace(landmarks: $0) }
        XCTAssertEqual(QualityMetrics.backgroundDifference(input: before, output: after, width: 1280, height: 720, faces: geometry), 0,
                       "M3: the background is bit-exact")
        for (index, face) in geometry.enumerated() {
            XCTAssertGreaterThan(changedPixels(in: face, before: before, after: after), 0,
                                 "face \(index) (IOD \(face.interOcularDistance)) was treated")
        }
    }

    /// `--faces`: only the chosen faces change (their ovals do; nothing beyond 1 IOD of their
    /// ovals does, so every other face keeps its pixels), by track ID and `largest`.
    func testOnlyTheChosenFacesAreTreated() throws {
        let scratch = try Scratch()
        let scene = scratch.path("group.png")
        _ = try makeScene(try groupPlacements(), width: 1280, height: 720, path: scene)
        let environment = Self.environment
        let tracks = try analyzedTracks(scene)
        let before = try rgba(scene, width: 1280, height: 720)
        let largest = try XCTUnwrap(tracks.max { $0.face.interOcularDistance < $1.face.interOcularDistance })
        let picked = [tracks[0], tracks[tracks.count / 2]]
        for (selection, chosen) in [(picked.map { String($0.id) }.joined(separator: ","), picked), ("largest", [largest])] {
            let output = scratch.path("out-\(selection).png")
            let result = try Tool.run(Tool.velvet, ["render", scene, "-o", output, "--quiet", "--faces", selection], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            let after = try rgba(output, width: 1280, height: 720)
            XCTAssertEqual(QualityMetrics.backgroundDifference(input: before, output: after, width: 1280, height: 720,
                                                               faces: chosen.map(\.face)), 0,
                           "--faces \(selection): nothing changes beyond the chosen faces")
            for track in tracks {
                let changed = changedPixels(in: track.face, before: before, after: after)
                if chosen.contains(where: { $0.id == track.id }) {
                    XCTAssertGreaterThan(changed, 0, "--faces \(selection): track \(track.id) treated")
                } else if chosen.allSatisfy({ length($0.face.landmarks[1] - track.face.landmarks[1])
                                                > 2 * ($0.face.interOcularDistance + track.face.interOcularDistance) }) {
                    XCTAssertEqual(changed, 0, "--faces \(selection): track \(track.id) untouched")
                }
            }
        }
        let refused = try Tool.run(Tool.velvet, ["render", scene, "-o", scratch.path("x.png"), "--faces", "0,2"], environment: environment)
        XCTAssertEqual(refused.status, 2, refused.stderr)
    }

    /// A preset's `others` section: the largest face gets the preset's own settings, every
    /// other face `others`' (docs/CLI.md, Per-face settings).
    func testOthersSettingsTreatEveryFaceButTheLargest() throws {
        let scratch = try Scratch()
        let scene = scratch.path("group.png")
        _ = try makeScene(try groupPlacements(), width: 1280, height: 720, path: scene)
        let tracks = try analyzedTracks(scene)
        let largest = try XCTUnwrap(tracks.max { $0.face.interOcularDistance < $1.face.interOcularDistance })
        let others = tracks.filter { $0.id != largest.id }
        let before = try rgba(scene, width: 1280, height: 720)
        let on = #""skin": {"strength": 0.8, "spotRemoval": 0.5}, "lipstick": {"strength": 0.5}"#
        let off = #""skin": {"strength": 0, "spotRemoval": 0}, "lipstick": {"strength": 0}"#
        func render(_ preset: String, _ name: String) throws -> [UInt8] {
            let file = scratch.path("\(name).json"), output = scratch.path("\(name).png")
            try Data(preset.utf8).write(to: URL(fileURLWithPath: file))
            let result = try Tool.run(Tool.velvet, ["render", scene, "-o", output, "--quiet", "--preset", file], environment: Self.environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            return try rgba(output, width: 1280, height: 720)
        }

        // The preset's own settings on, `others` turning them off: only the largest face changes.
        let largestOnly = try render("{\(on), \"others\": {\(off)}}", "largest-only")
        XCTAssertGreaterThan(changedPixels(in: largest.face, before: before, after: largestOnly), 0, "the largest face is treated")
        XCTAssertEqual(QualityMetrics.backgroundDifference(input: before, output: largestOnly, width: 1280, height: 720,
                                                           faces: [largest.face]), 0, "nothing changes beyond the largest face")
        for track in others where length(largest.face.landmarks[1] - track.face.landmarks[1])
            > 2 * (largest.face.interOcularDistance + track.face.interOcularDistance) {
            XCTAssertEqual(changedPixels(in: track.face, before: before, after: largestOnly), 0, "track \(track.id) untouched")
        }

        // The preset's own settings off, `others` on: the largest face is bit-exact, every other one treated.
        let othersOnly = try render("{\"others\": {\(on)}}", "others-only")
        XCTAssertEqual(changedPixels(in: largest.face, before: before, after: othersOnly), 0, "the largest face is untouched")
        for track in others {
            XCTAssertGreaterThan(changedPixels(in: track.face, before: before, after: othersOnly), 0, "track \(track.id) treated")
        }
        XCTAssertEqual(QualityMetrics.backgroundDifference(input: before, output: othersOnly, width: 1280, height: 720,
                                                           faces: others.map(\.face)), 0, "nothing changes beyond the other faces")
        // A matte is of one skin mask; each pass has its own: refused before any work.
        let matte = try Tool.run(Tool.velvet, ["render", scene, "-o", scratch.path("m.png"), "--preset", scratch.path("others-only.json"),
                                               "--matte", scratch.path("matte.png")], environment: Self.environment)
        XCTAssertEqual(matte.status, 2, matte.stderr)
        XCTAssertTrue(matte.stderr.contains("others section"), matte.stderr)
    }

    private static var environment: [String: String] {
        ["VELVET_VALIDATION": "1", "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path]
    }

    /// `velvet analyze`'s faces of a still, with their track IDs.
    private func analyzedTracks(_ scene: String) throws -> [(id: Int, face: BeautyFace)] {
        let analyzed = try Tool.run(Tool.velvet, ["analyze", scene, "--json", "--quiet"], environment: Self.environment)
        XCTAssertEqual(analyzed.status, 0, analyzed.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: analyzed.output) as? [String: Any])
        let tracks = try XCTUnwrap((json["frames"] as? [[String: Any]])?.first?["faces"] as? [[String: Any]]).map { face in
            (id: try XCTUnwrap(face["track"] as? Int),
             face: try BeautyFace(landmarks: try XCTUnwrap(face["landmarks"] as? [[Double]]).map { SIMD2(Float($0[0]), Float($0[1])) }))
        }
        XCTAssertEqual(tracks.count, 12)
        return tracks
    }

    /// Pixels inside the face's oval that differ (1280x720 RGBA frames).
    private func changedPixels(in face: BeautyFace, before: [UInt8], after: [UInt8]) -> Int {
        let oval = face.polygon(.faceOval)
        let box = FaceBox(bounding: oval)
        var changed = 0
        for y in Int(box.y)..<Int(box.y + box.height) where y >= 0 && y < 720 {
            for x in Int(box.x)..<Int(box.x + box.width) where x >= 0 && x < 1280 {
                guard RegionMask.signedDistance(SIMD2(Float(x) + 0.5, Float(y) + 0.5), oval) < 0 else { continue }
                let i = 4 * (y * 1280 + x)
                if (0..<3).contains(where: { before[i + $0] != after[i + $0] }) { changed += 1 }
            }
        }
        return changed
    }

    func rgba(_ path: String, width: Int, height: Int) throws -> [UInt8] {
        let raw = path + ".rgba"
        try Tool.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        XCTAssertEqual(bytes.count, width * height * 4)
        return bytes
    }
}

private func length(_ v: SIMD2<Float>) -> Float { (v * v).sum().squareRoot() }
