import CFFmpeg
import VelvetGPU

/// Loads a still (PNG, JPEG, ...; EXIF orientation applied) or the first frame of a video
/// into a working image on the GPU: upright rgba16f R'G'B', full range.
public enum ImageLoader {
    public static func load(_ path: String, context: GPUContext) throws -> GPUImage {
        let (reader, decoded) = try firstFrame(of: path)
        let frame = try PixelRepacker().readable(decoded)
        let layout = VideoPlaneLayout(frame.pixelFormat)!
        let orientation = (reader.info.isStillImage ? reader.exifOrientation(of: frame) : nil) ?? reader.info.orientation
        let converter = try ColorConverter(context: context)
        let planes = try converter.makePlanes(layout, width: frame.width, height: frame.height)
        let upright = orientation.uprightSize(width: frame.width, height: frame.height)
        let working = try GPUImage(context: context, width: upright.width, height: upright.height, format: .rgba16f)
        let recorder = try CommandRecorder(context: context)
        try converter.recordUpload(of: frame, to: planes, on: recorder)
        try converter.recordToWorking(planes: planes, layout: layout, color: ColorDescription(frame: frame.pointer, layout: layout),
                                  orientation: orientation, working: working, on: recorder)
        try recorder.submit().wait()
        return working
    }

    /// The upright size of the picture (or first frame) at `path`, decoded on the CPU: a file
    /// that does not decode fails here (a LUT checked when a preset is saved, with no GPU).
    public static func decodedSize(of path: String) throws -> (width: Int, height: Int) {
        let (reader, frame) = try firstFrame(of: path)
        let orientation = (reader.info.isStillImage ? reader.exifOrientation(of: frame) : nil) ?? reader.info.orientation
        return orientation.uprightSize(width: frame.width, height: frame.height)
    }

    private static func firstFrame(of path: String) throws -> (MediaReader, MediaFrame) {
        let reader = try MediaReader(path: path)
        var decoded: MediaFrame?
        while decoded == nil, let item = try reader.next() {
            if case .video(let frame) = item { decoded = frame }
        }
        guard let decoded else { throw MediaError.decode(path: path, reason: "no video frame") }
        return (reader, decoded)
    }
}
