import CFFmpeg

/// What an encoded output stream keeps of the input stream it comes from, as ffmpeg keeps it:
/// its metadata (language, title, ...) and disposition (default, forced, hearing impaired, ...),
/// with the `encoder` tag naming the encoder that made it, not the input's.
enum EncodedStreamTags {
    static func copy(from input: UnsafeMutablePointer<AVStream>, to output: UnsafeMutablePointer<AVStream>, encoder: UnsafePointer<AVCodec>) {
        av_dict_copy(&output.pointee.metadata, input.pointee.metadata, 0)
        let version = avcodec_version()
        av_dict_set(&output.pointee.metadata, "encoder",
                    "Lavc\(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF) \(String(cString: encoder.pointee.name))", 0)
        output.pointee.disposition = input.pointee.disposition & ~AV_DISPOSITION_ATTACHED_PIC
    }
}
