/// VelvetFace: face detection, 468-point mesh tracking, person segmentation, and the
/// named mesh regions (eyes, brows, lips, nose, oval, cheeks) the later stages draw from.
///
/// `FaceTracker` is the entry point: it runs MediaPipe 0.10.21's BlazeFace detectors
/// (`FaceDetector`), face mesh (`FaceMeshModel`) and selfie segmentation (`PersonSegmenter`)
/// on the GPU through VelvetNN, with MediaPipe's pre/post-processing reproduced exactly
/// (OpenCV's pixel convention in the crops included), and returns `Face`s plus the person
/// mask per frame. `FaceOverlay` draws the results; `TrackingPass` feeds a
/// `VideoRenderer`'s frames to the tracker.
public enum VelvetFace {}
