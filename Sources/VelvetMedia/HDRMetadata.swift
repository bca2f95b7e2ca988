import CFFmpeg

/// HDR10 static metadata of the input: the mastering display's colour volume and the
/// content light levels, from the stream's side data (MP4, Matroska) or its first frame's
/// (HEVC SEI). The output gets them as stream side data (which the MP4 and Matroska muxers
/// write) and in the encoder's own SEI (x265 and x264 parameters).
struct HDRMetadata {
    var masteringDisplay: AVMasteringDisplayMetadata?
    var contentLight: AVContentLightMetadata?

    init?(stream: UnsafePointer<AVStream>, firstFrame: MediaFrame) {
        masteringDisplay = Self.sideData(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, firstFrame,
                                         AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
        contentLight = Self.sideData(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, firstFrame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
        if masteringDisplay == nil && contentLight == nil { return nil }
    }

    /// Attaches the metadata to an output stream.
    func attach(to stream: UnsafeMutablePointer<AVStream>) -> Int32 {
        if var display = masteringDisplay {
            let added = velvet_add_stream_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &display,
                                                    MemoryLayout<AVMasteringDisplayMetadata>.size)
            if added < 0 { return added }
        }
        if var light = contentLight {
            return velvet_add_stream_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &light, MemoryLayout<AVContentLightMetadata>.size)
        }
        return 0
    }

    /// `key=value` parameters for libx265 (`x265-params`) or libx264 (`x264-params`).
    func encoderParameters(x265: Bool) -> [String] {
        var parameters: [String] = x265 ? ["hdr10=1"] : []
        if let display = masteringDisplay, display.has_primaries != 0, display.has_luminance != 0 {
            // Chromaticities in 1/50000, luminance in 1/10000 cd/m²; FFmpeg stores R, G, B, the SEI lists G, B, R.
            let p = display.display_primaries
            func xy(_ point: (AVRational, AVRational)) -> String { "(\(units(point.0, 50000)),\(units(point.1, 50000)))" }
            let value = "G\(xy(p.1))B\(xy(p.2))R\(xy(p.0))WP\(xy(display.white_point))"
                + "L(\(units(display.max_luminance, 10000)),\(units(display.min_luminance, 10000)))"
            parameters.append((x265 ? "master-display=" : "mastering-display=") + value)
        }
        if let light = contentLight {
            parameters.append((x265 ? "max-cll=" : "cll=") + "\(light.MaxCLL),\(light.MaxFALL)")
        }
        return parameters
    }

    private func units(_ value: AVRational, _ scale: Int64) -> Int64 {
        value.den == 0 ? 0 : (Int64(value.num) * scale + Int64(value.den) / 2) / Int64(value.den)
    }

    /// The stream's side data of one type, else the frame's.
    private static func sideData<T>(_ stream: UnsafePointer<AVStream>, _ streamType: AVPacketSideDataType, _ frame: MediaFrame,
                                    _ frameType: AVFrameSideDataType) -> T? {
        var size = 0
        if let data = av_stream_get_side_data(stream, streamType, &size), size >= MemoryLayout<T>.size {
            return UnsafeRawPointer(data).loadUnaligned(as: T.self)
        }
        if let entry = av_frame_get_side_data(frame.pointer, frameType), entry.pointee.size >= MemoryLayout<T>.size {
            return UnsafeRawPointer(entry.pointee.data).loadUnaligned(as: T.self)
        }
        return nil
    }
}
