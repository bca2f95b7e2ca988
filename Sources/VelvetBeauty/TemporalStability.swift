import Foundation
import VelvetGPU

extension QualityMetrics {
    /// M15, temporal stability of a rendered video, accumulated frame by frame from 8-bit
    /// RGBA input and output (exact levels, as a lossless render keeps them) and the faces
    /// of each input frame:
    /// (a) the largest output change (levels, RGB) on frames whose face region (within
    /// 1.0 IOD of a face oval of this frame or the one before: M3's complement) holds the
    /// same input as the frame before;
    /// (b) the output's mean frame-to-frame change inside the face ovals over the input's;
    /// (c) frames where a face in view got no beauty: a found face whose oval the output
    /// left exactly as the input, or a frame without a face between two with one at most
    /// `gapLimit` frames apart (the face was there and the tracker missed it).
    public struct TemporalStability: Sendable {
        public struct Result: Sendable, Equatable {
            /// (a), levels; nil when no frame had its face region unchanged.
            public var largestChangeOnStill: Int?
            /// Frames (a) looked at.
            public var stillFrames: Int
            /// (b); nil when the input never changed inside the ovals.
            public var changeRatio: Double?
            /// (c).
            public var framesWithoutBeauty: Int
            /// Frames with a found face, and all frames.
            public var framesWithFace: Int
            public var frames: Int
        }

        /// A frame without a face at most this many frames from faces on both sides counts as a miss.
        public let gapLimit: Int

        private var previous: (input: [UInt8], output: [UInt8], faces: [BeautyFace])?
        private var largest: Int?
        private var stillFrames = 0
        private var outputChange = 0.0, inputChange = 0.0
        private var untreated = 0
        private var withFace = 0
        private var frames = 0
        private var faceless = 0
        private var seenFace = false

        public init(gapLimit: Int = 15) {
            self.gapLimit = gapLimit
        }

        public var result: Result {
            Result(largestChangeOnStill: largest, stillFrames: stillFrames,
                   changeRatio: inputChange > 0 ? outputChange / inputChange : nil,
                   framesWithoutBeauty: untreated, framesWithFace: withFace, frames: frames)
        }

        /// Adds the next frame: `input` and `output` RGBA8, `width` x `height`; `faces` from the input.
        public mutating func add(input: [UInt8], output: [UInt8], width: Int, height: Int, faces: [BeautyFace]) {
            precondition(input.count == width * height * 4 && output.count == input.count, "images differ in size")
            frames += 1
            defer { previous = (input, output, faces) }
            countBeauty(input: input, output: output, width: width, height: height, faces: faces)
            guard let previous, previous.input.count == input.count else { return }

            let near = Self.pixels(width: width, height: height, faces: faces + previous.faces) { face in face.interOcularDistance }
            if !near.isEmpty, near.allSatisfy({ Self.sameRGB(input, previous.input, $0) }) {
                stillFrames += 1
                largest = max(largest ?? 0, near.map { Self.rgbChange(output, previous.output, $0).max }.max() ?? 0)
            }
            for pixel in Self.pixels(width: width, height: height, faces: faces, margin: { _ in 0 }) {
                outputChange += Double(Self.rgbChange(output, previous.output, pixel).sum)
                inputChange += Double(Self.rgbChange(input, previous.input, pixel).sum)
            }
        }

        private mutating func countBeauty(input: [UInt8], output: [UInt8], width: Int, height: Int, faces: [BeautyFace]) {
            guard !faces.isEmpty else {
                faceless += 1
                return
            }
            if seenFace, faceless > 0, faceless <= gapLimit { untreated += faceless }
            seenFace = true
            faceless = 0
            withFace += 1
            let treated = faces.allSatisfy { face in
                Self.pixels(width: width, height: height, faces: [face], margin: { _ in 0 })
                    .contains { !Self.sameRGB(input, output, $0) }
            }
            if !treated { untreated += 1 }
        }

        /// A downloaded rgba8 or rgba16f image as 8-bit levels (what a lossless 8-bit render keeps).
        public static func levels(_ readback: GPUReadback, pixels: Int) -> [UInt8] {
            let raw = readback.raw
            guard raw.count < pixels * 8 else {
                return raw.bindMemory(to: UInt16.self).prefix(pixels * 4).map { half in
                    UInt8((min(max(Float(Float16(bitPattern: half)), 0), 1) * 255).rounded())
                }
            }
            return Array(raw.prefix(pixels * 4))
        }

        /// Byte offsets of the pixels within `margin` of any face's oval.
        static func pixels(width: Int, height: Int, faces: [BeautyFace], margin: (BeautyFace) -> Float) -> [Int] {
            var inside = [Bool](repeating: false, count: width * height)
            for face in faces {
                let oval = face.polygon(.faceOval), grow = margin(face)
                let box = QualityMetrics.cropRegion(around: oval, margin: grow + 1, width: width, height: height)
                for y in box.y..<(box.y + box.height) {
                    for x in box.x..<(box.x + box.width) where !inside[y * width + x] {
                        inside[y * width + x] = RegionMask.signedDistance(SIMD2(Float(x) + 0.5, Float(y) + 0.5), oval) <= grow
                    }
                }
            }
            return inside.indices.filter { inside[$0] }.map { 4 * $0 }
        }

        static func sameRGB(_ a: [UInt8], _ b: [UInt8], _ at: Int) -> Bool {
            a[at] == b[at] && a[at + 1] == b[at + 1] && a[at + 2] == b[at + 2]
        }

        static func rgbChange(_ a: [UInt8], _ b: [UInt8], _ at: Int) -> (max: Int, sum: Int) {
            let r = abs(Int(a[at]) - Int(b[at])), g = abs(Int(a[at + 1]) - Int(b[at + 1]))
            let bl = abs(Int(a[at + 2]) - Int(b[at + 2]))
            return (max(r, g, bl), r + g + bl)
        }
    }
}
