import VelvetGPU

/// One tracked face in one frame, in pixels of the upright frame (top-left origin, y down).
public struct Face: Sendable, Equatable {
    /// MediaPipe's 468 mesh points: x, y in pixels; z (depth, smaller is nearer) in the same
    /// pixel units, relative to the face centre.
    public var landmarks: [SIMD3<Float>]
    /// The mesh model's presence probability (0.5...1 for a kept face).
    public var score: Float
    /// The bounding box of the landmarks.
    public var box: FaceBox
    /// A number that stays with the face while it is tracked (new faces get new numbers).
    public var trackID: Int
    /// Frames since the mesh last saw the face: 0 for a face seen in this frame; a lost face
    /// is held at its last landmarks for a few frames (`FaceTrackerOptions.holdFrames`).
    public var missedFrames: Int
    /// How much of the effect the face gets: 1 when seen, falling to 0 over the frames a
    /// lost face is held, so a face that leaves fades out instead of popping.
    public var weight: Float

    public init(landmarks: [SIMD3<Float>], score: Float, trackID: Int = 0, missedFrames: Int = 0, weight: Float = 1) {
        self.landmarks = landmarks
        self.score = score
        self.trackID = trackID
        self.missedFrames = missedFrames
        self.weight = weight
        box = FaceBox(bounding: landmarks.map { SIMD2($0.x, $0.y) })
    }

    /// The mesh points without depth.
    public var points: [SIMD2<Float>] { landmarks.map { SIMD2($0.x, $0.y) } }

    /// Distance between the outer eye corners (points 33 and 263): the metrics' face size.
    public var interOcularDistance: Float {
        let d = landmarks[33] - landmarks[263]
        return (d.x * d.x + d.y * d.y).squareRoot()
    }
}

/// What the tracker found in one frame.
public struct FaceTrackerResult: @unchecked Sendable {
    public var faces: [Face]
    /// The person probability (0...1) at the segmentation model's resolution (256x256 or
    /// 256x144, r32f), stretched over the frame: read it with a linear sampler at
    /// frame-normalised coordinates (`FaceTracker.recordPersonMaskResize` makes a frame-sized
    /// copy). Nil when segmentation is off; with a segmentation cadence above 1 it is the last
    /// computed mask.
    public var personMask: GPUImage?
    /// Whether a detector ran on this frame.
    public var ranDetection: Bool
}
