// libFuzzer target: the TFLite reader and load-time folding must reject any byte string
// with an error, never crash, hang or run out of memory. Built by Tools/fuzz.sh.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTFLite(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: size))
    if let model = try? TFLiteModel(bytes: bytes, path: nil) {
        _ = try? TFLiteGraph(model: model)
    }
    return 0
}
