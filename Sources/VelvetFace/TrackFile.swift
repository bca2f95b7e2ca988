import Foundation
import VelvetFiles

/// A problem with a track file, in one line naming the file.
public struct TrackFileError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ path: String, _ problem: String) { description = "\(path): \(problem)" }
}

/// The faces of every frame of an input, as `velvet analyze --tracks` writes them and
/// `velvet render --tracks` reads them: a versioned JSON document (docs/CLI.md, Track files).
/// Numbers are written as the shortest decimal that reads back as the same Double, and
/// every Float widens to a Double exactly, so a file read back gives the very landmarks
/// written (a render from it is bit-exact with one from the tracker).
public struct TrackFile: Equatable, Sendable {
    public static let format = "velvet-tracks"
    public static let version = 1

    public struct Frame: Equatable, Sendable {
        /// 0-based position in the input.
        public var index: Int
        /// Presentation time in seconds.
        public var time: Double
        public var faces: [Face]
        /// Share of the frame the person segmentation counts as person (probability >= 0.5,
        /// at the model's resolution); nil when not measured.
        public var personCoverage: Double?
        public init(index: Int, time: Double, faces: [Face], personCoverage: Double? = nil) {
            (self.index, self.time, self.faces, self.personCoverage) = (index, time, faces, personCoverage)
        }
    }

    /// How the tracker ran (informational: a render from the file does not track).
    public struct Tracker: Equatable, Sendable {
        public var mode: String
        public var detector: String
        public var maxFaces: Int
        public init(mode: String, detector: String, maxFaces: Int) { (self.mode, self.detector, self.maxFaces) = (mode, detector, maxFaces) }
    }

    public var input: String
    /// The upright frame size the landmarks' pixels are in.
    public var width: Int
    public var height: Int
    public var tracker: Tracker?
    public var frames: [Frame]

    public init(input: String, width: Int, height: Int, tracker: Tracker? = nil, frames: [Frame]) {
        (self.input, self.width, self.height, self.tracker, self.frames) = (input, width, height, tracker, frames)
    }

    // MARK: Writing

    /// The document as JSON text (one line).
    public func encoded() -> String {
        var text = ""
        encode { text += $0 }
        return text
    }

    /// The document in pieces, header, each frame, then its end, for a writer that need not
    /// hold it whole (a long clip's document is many times the faces it holds).
    public func encode(_ emit: (String) throws -> Void) rethrows {
        var head = "{\"format\":\"\(Self.format)\",\"version\":\(Self.version),\"input\":\(Self.quoted(input)),"
        head += "\"width\":\(width),\"height\":\(height),"
        if let tracker {
            head += "\"tracker\":{\"mode\":\(Self.quoted(tracker.mode)),\"detector\":\(Self.quoted(tracker.detector)),"
                + "\"max_faces\":\(tracker.maxFaces)},"
        }
        try emit(head + "\"frames\":[")
        for (position, frame) in frames.enumerated() {
            var text = position > 0 ? "," : ""
            text += "{\"frame\":\(frame.index),\"time\":\(frame.time)"
            if let coverage = frame.personCoverage { text += ",\"person\":{\"coverage\":\(coverage)}" }
            text += ",\"faces\":["
            for (f, face) in frame.faces.enumerated() {
                if f > 0 { text += "," }
                let box = [face.box.x, face.box.y, face.box.width, face.box.height].map(Self.number).joined(separator: ",")
                let landmarks = face.landmarks.map { "[\(Self.number($0.x)),\(Self.number($0.y)),\(Self.number($0.z))]" }
                    .joined(separator: ",")
                text += "{\"track\":\(face.trackID),\"score\":\(Self.number(face.score)),\"held\":\(face.missedFrames),"
                    + "\"weight\":\(Self.number(face.weight)),\"box\":[\(box)],\"landmarks\":[\(landmarks)]}"
            }
            try emit(text + "]}")
        }
        try emit("]}")
    }

    /// A Float as the shortest decimal of its exact Double value.
    static func number(_ value: Float) -> String { "\(Double(value))" }

    static func quoted(_ string: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [string])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    // MARK: Reading

    /// Reads and checks a track file: its format and version, and every frame (numbered from
    /// 0 in order, faces with distinct positive track IDs, a score in 0...1 and 468 landmarks
    /// of three finite numbers). The first problem found is thrown, naming `path`.
    public static func read(_ path: String) throws -> TrackFile {
        // Through a handle, so a pipe or FIFO (`--tracks <(…)`) reads as a file does.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            throw TrackFileError(path, "cannot read the track file")
        }
        return try decode(data, path: path)
    }

    /// The largest face oval a track file may hold, in frame sides: a close-up cut by the
    /// frame is at most about one; the tracker never finds one past the frame.
    static let largestFaceInFrames = 4

    public static func decode(_ data: Data, path: String) throws -> TrackFile {
        func fail(_ problem: String) -> TrackFileError { TrackFileError(path, problem) }
        guard let document = try? JSONSerialization.jsonObject(with: data) else {
            throw fail("not a track file (not valid JSON: cut short, or a number JSON has not, such as NaN)")
        }
        guard let root = document as? [String: Any] else { throw fail("not a track file (not a JSON object)") }
        if let repeated = JSONDuplicateKeys.first(in: data) {
            throw fail("\"\(repeated)\" appears twice (JSON readers would keep one silently)")
        }
        guard root["format"] as? String == format else { throw fail("not a track file (\"format\" must be \"\(format)\")") }
        guard root["version"] != nil else { throw fail("no \"version\"") }
        guard let version = integer(root["version"]) else { throw fail("\"version\" must be an integer") }
        guard version == Self.version else {
            throw fail("track file version \(version) is not supported (this velvet reads version \(Self.version))")
        }
        guard let width = integer(root["width"]), let height = integer(root["height"]), width > 0, height > 0 else {
            throw fail("\"width\" and \"height\" must be positive integers")
        }
        guard let frames = root["frames"] as? [Any] else { throw fail("no \"frames\" array") }
        var tracker: Tracker?
        if let object = root["tracker"] as? [String: Any] {
            tracker = Tracker(mode: object["mode"] as? String ?? "", detector: object["detector"] as? String ?? "",
                              maxFaces: integer(object["max_faces"]) ?? 0)
        }
        var parsed: [Frame] = []
        for (position, item) in frames.enumerated() {
            let at = "frame \(position)"
            guard let frame = item as? [String: Any] else { throw fail("\(at) is not an object") }
            guard integer(frame["frame"]) == position else { throw fail("\(at): \"frame\" must be \(position) (frames in order from 0)") }
            guard let time = real(frame["time"]) else { throw fail("\(at): \"time\" must be a number") }
            guard let faces = frame["faces"] as? [Any] else { throw fail("\(at): no \"faces\" array") }
            // As many as the tracker can follow: a render's cost grows with the faces it treats.
            guard faces.count <= FaceTrackerOptions.maxFacesRange.upperBound else {
                throw fail("\(at): \(faces.count) faces, more than the \(FaceTrackerOptions.maxFacesRange.upperBound) a frame can have")
            }
            var coverage: Double?
            if let person = frame["person"] as? [String: Any] { coverage = real(person["coverage"]) }
            var parsedFaces: [Face] = []
            for (f, item) in faces.enumerated() {
                let atFace = "\(at), face \(f)"
                guard let face = item as? [String: Any] else { throw fail("\(atFace) is not an object") }
                guard let track = integer(face["track"]), track > 0 else { throw fail("\(atFace): \"track\" must be a positive integer") }
                guard !parsedFaces.contains(where: { $0.trackID == track }) else { throw fail("\(atFace): track \(track) twice in one frame") }
                guard let score = real(face["score"]), (0...1).contains(score) else { throw fail("\(atFace): \"score\" must be a number in 0...1") }
                // A face the tracker holds after losing it (optional: 0 and 1 when absent).
                let held = face["held"] == nil ? 0 : integer(face["held"]) ?? -1
                guard held >= 0 else { throw fail("\(atFace): \"held\" must be a whole number of frames, 0 or more") }
                let weight = face["weight"] == nil ? 1 : real(face["weight"]) ?? -1
                guard (0...1).contains(weight) else { throw fail("\(atFace): \"weight\" must be a number in 0...1") }
                guard let points = face["landmarks"] as? [Any], points.count == FaceMeshModel.pointCount else {
                    throw fail("\(atFace): \"landmarks\" must be \(FaceMeshModel.pointCount) points")
                }
                var landmarks: [SIMD3<Float>] = []
                landmarks.reserveCapacity(points.count)
                for (p, point) in points.enumerated() {
                    guard let xyz = point as? [Any], xyz.count == 3, let x = real(xyz[0]), let y = real(xyz[1]), let z = real(xyz[2]),
                          [x, y, z].allSatisfy({ $0.isFinite && abs($0) <= 1e6 }) else {
                        throw fail("\(atFace): landmark \(p) must be [x, y, z], three numbers within ±1e6")
                    }
                    landmarks.append(SIMD3(Float(x), Float(y), Float(z)))
                }
                let flat = landmarks.map { SIMD2($0.x, $0.y) }
                guard MeshRegion.ovalIsLargeEnough(flat) else {
                    throw fail("\(atFace): the face oval is under \(Int(MeshRegion.minimumOvalSide)) px a side (landmarks collapsed)")
                }
                // The stages' work follows the face's size: a face thousands of frames wide ran for minutes.
                let (low, high) = MeshRegion.ovalBounds(flat), largest = Float(Self.largestFaceInFrames * max(width, height))
                guard high.x - low.x <= largest, high.y - low.y <= largest else {
                    throw fail("\(atFace): the face oval is over \(Int(largest)) px a side, \(Self.largestFaceInFrames)x the frame's longer side")
                }
                parsedFaces.append(Face(landmarks: landmarks, score: Float(score), trackID: track, missedFrames: held,
                                        weight: Float(weight)))
            }
            parsed.append(Frame(index: position, time: time, faces: parsedFaces, personCoverage: coverage))
        }
        return TrackFile(input: root["input"] as? String ?? "", width: width, height: height, tracker: tracker, frames: parsed)
    }

    /// A JSON number, as a Double.
    private static func real(_ value: Any?) -> Double? {
        (value as? NSNumber)?.doubleValue
    }

    private static func integer(_ value: Any?) -> Int? {
        guard let value = real(value), value.rounded() == value, abs(value) < 1e15 else { return nil }
        return Int(value)
    }
}
