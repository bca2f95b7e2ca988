/// Owns copies of values for the duration of one Vulkan call, so create-info structs can
/// point at arrays and strings without a pyramid of withUnsafePointer closures.
final class Arena {
    private var deallocators: [() -> Void] = []

    deinit { deallocators.forEach { $0() } }

    func pointer<T>(to value: T) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        pointer.initialize(to: value)
        deallocators.append { pointer.deinitialize(count: 1); pointer.deallocate() }
        return pointer
    }

    func array<T>(_ values: [T]) -> UnsafeMutablePointer<T>? {
        guard !values.isEmpty else { return nil }
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: values.count)
        pointer.initialize(from: values, count: values.count)
        deallocators.append { pointer.deinitialize(count: values.count); pointer.deallocate() }
        return pointer
    }

    func cString(_ string: String) -> UnsafePointer<CChar> {
        let utf8 = Array(string.utf8CString)
        return UnsafePointer(array(utf8)!)
    }

    func cStrings(_ strings: [String]) -> UnsafePointer<UnsafePointer<CChar>?>? {
        array(strings.map { Optional(cString($0)) }).map { UnsafePointer($0) }
    }
}

/// Reads a fixed-size C char array (imported as a tuple) as a String.
func string<T>(fromCTuple tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
