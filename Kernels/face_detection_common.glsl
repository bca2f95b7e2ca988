// Shared by the detection decode and suppression kernels (DetectionMerge.swift).
#ifndef FACE_DETECTION_COMMON
#define FACE_DETECTION_COMMON
// Floats per candidate or detection: score, box low (x, y), box high (x, y), 6 keypoints.
const uint DETECTION_RECORD = 17u;
#endif
