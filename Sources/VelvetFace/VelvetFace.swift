/// VelvetFace: face detection, 468-point mesh tracking, person segmentation, and the
/// named mesh regions (eyes, brows, lips, nose, oval, cheeks) the later stages draw from.
public enum VelvetFace {}
