import Foundation

/// One face found by a BlazeFace detector, in pixels of the upright frame.
public struct FaceDetection: Sendable, Equatable {
    public var score: Float
    public var box: FaceBox
    /// Right eye, left eye, nose tip, mouth centre, right ear, left ear (the subject's sides).
    public var keypoints: [SIMD2<Float>]

    public init(score: Float, box: FaceBox, keypoints: [SIMD2<Float>]) {
        (self.score, self.box, self.keypoints) = (score, box, keypoints)
    }
}

/// The two BlazeFace models and how their raw outputs are read (as MediaPipe 0.10.21 reads them).
public enum FaceDetectorModel: String, Sendable, CaseIterable {
    /// 128x128 input, 896 anchors: faces near the camera.
    case shortRange = "short"
    /// 192x192 input, 2304 anchors: small, distant and group faces.
    case fullRange = "full"

    var file: FaceModelName { self == .shortRange ? .shortRangeDetector : .fullRangeDetector }
    var inputSize: Int { self == .shortRange ? 128 : 192 }
    var anchorCount: Int { self == .shortRange ? 896 : 2304 }
    /// The letterbox padding as the model sees it after RGB -> [-1, 1]: black.
    var letterboxBorder: Float { -1 }
    /// MediaPipe's score threshold: 0.5 for short range; the full-range graph keeps its own
    /// 0.6 whatever min_detection_confidence says (its boxes are only reproduced with 0.6,
    /// since a 0.5...0.6 candidate would join the weighted average).
    public var defaultScoreThreshold: Float { self == .shortRange ? 0.5 : 0.6 }

    /// Anchor centres in 0...1 of the letterboxed square, in the model's output order.
    var anchors: [SIMD2<Float>] {
        // (grid cells per side, anchors per cell): layers of equal stride merged.
        let layers: [(Int, Int)] = self == .shortRange ? [(16, 2), (8, 6)] : [(48, 1)]
        var anchors: [SIMD2<Float>] = []
        for (cells, perCell) in layers {
            for y in 0..<cells {
                for x in 0..<cells {
                    let centre = SIMD2((Float(x) + 0.5) / Float(cells), (Float(y) + 0.5) / Float(cells))
                    anchors += Array(repeating: centre, count: perCell)
                }
            }
        }
        return anchors
    }
}

/// Turns a detector's raw outputs into detections: decode against the anchors, keep
/// scores above the threshold, map into frame pixels through the view, weighted
/// non-maximum suppression.
struct DetectionDecoder: Sendable {
    let model: FaceDetectorModel
    let anchors: [SIMD2<Float>]
    var scoreThreshold: Float

    init(model: FaceDetectorModel, scoreThreshold: Float) {
        self.model = model
        anchors = model.anchors
        self.scoreThreshold = scoreThreshold
    }

    /// - Parameters:
    ///   - regressors: anchorCount x 16 floats; logits: anchorCount floats.
    ///   - view: the square of the frame the model saw.
    /// - Returns: the candidates above the threshold in frame pixels, before suppression,
    ///   less those cut by a tile edge.
    func candidates(regressors: UnsafeBufferPointer<Float>, logits: UnsafeBufferPointer<Float>,
                    view: DetectionView) -> [DetectionCandidate] {
        let scale = Float(model.inputSize)
        var candidates: [DetectionCandidate] = []
        for (index, anchor) in anchors.enumerated() where index < logits.count {
            let logit = min(max(logits[index], -100), 100)
            let score = 1 / (1 + expf(-logit))
            guard score >= scoreThreshold else { continue }
            let r = regressors.baseAddress! + index * 16
            let centre = SIMD2(r[0], r[1]) / scale + anchor
            let size = SIMD2(r[2], r[3]) / scale
            let low = centre - size / 2, high = centre + size / 2
            guard !view.touchesCutEdge(low: low, high: high) else { continue }
            // The view turns by quarter turns, so the box's corners map to a box again.
            let corners = [low, high, SIMD2(low.x, high.y), SIMD2(high.x, low.y)].map(view.framePoint)
            let keypoints = (0..<6).map { view.framePoint(SIMD2(r[4 + 2 * $0], r[5 + 2 * $0]) / scale + anchor) }
            candidates.append(DetectionCandidate(score: score, low: corners.reduce(corners[0], pointwiseMin),
                                                 high: corners.reduce(corners[0], pointwiseMax), keypoints: keypoints))
        }
        return candidates
    }

    /// MediaPipe's decoding of one letterboxed frame: candidates, then suppression.
    func decode(regressors: UnsafeBufferPointer<Float>, logits: UnsafeBufferPointer<Float>,
                frameSize: (width: Int, height: Int)) -> [FaceDetection] {
        let view = DetectionView.letterbox(width: frameSize.width, height: frameSize.height)
        return DetectionCandidate.suppress(candidates(regressors: regressors, logits: logits, view: view))
    }
}

/// A detection before suppression, in frame pixels (corners kept for averaging).
struct DetectionCandidate: Sendable {
    var score: Float
    var low: SIMD2<Float>
    var high: SIMD2<Float>
    var keypoints: [SIMD2<Float>]

    var box: FaceBox { FaceBox(x: low.x, y: low.y, width: high.x - low.x, height: high.y - low.y) }

    /// MediaPipe's overlap above which two candidates are one face.
    static let overlapThreshold: Float = 0.3

    /// Weighted NMS: the best remaining candidate absorbs every candidate overlapping it by
    /// more than the threshold (itself included), averaged by score; the result keeps the
    /// best score. Detections come out best first.
    static func suppress(_ candidates: [DetectionCandidate]) -> [FaceDetection] {
        // Ties broken by position, so the order (and the averages) never depend on the
        // order the views were decoded in.
        var remaining = candidates.sorted {
            ($0.score, $0.low.x, $0.low.y) > ($1.score, $1.low.x, $1.low.y)
        }
        var kept: [FaceDetection] = []
        while let top = remaining.first {
            let topBox = top.box
            var merged = DetectionCandidate(score: top.score, low: .zero, high: .zero,
                                            keypoints: Array(repeating: .zero, count: top.keypoints.count))
            var total: Float = 0
            var rest: [DetectionCandidate] = []
            for candidate in remaining {
                if candidate.box.intersectionOverUnion(topBox) > overlapThreshold {
                    total += candidate.score
                    merged.low += candidate.low * candidate.score
                    merged.high += candidate.high * candidate.score
                    for k in merged.keypoints.indices { merged.keypoints[k] += candidate.keypoints[k] * candidate.score }
                } else {
                    rest.append(candidate)
                }
            }
            if total > 0 {
                merged.low /= total
                merged.high /= total
                merged.keypoints = merged.keypoints.map { $0 / total }
                kept.append(merged.detection)
            } else {
                // Degenerate (empty) top box: keep it as it is rather than loop forever.
                kept.append(top.detection)
                rest.removeAll { $0.low == top.low && $0.high == top.high && $0.score == top.score }
            }
            remaining = rest
        }
        return kept
    }

    var detection: FaceDetection { FaceDetection(score: score, box: box, keypoints: keypoints) }
}
