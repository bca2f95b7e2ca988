import Foundation

/// Finds a key that appears twice in one JSON object. Foundation's readers keep one of the
/// two silently (the first for `JSONDecoder`, the last for `JSONSerialization`), so a hand
/// edit that appends a corrected field was ignored; the files users edit refuse it instead.
public enum JSONDuplicateKeys {
    /// The dotted path of the first repeated key (`skin.strength`, `frames[2].faces[0].track`),
    /// nil when there is none. `data` should be JSON a reader accepted.
    public static func first(in data: Data) -> String? {
        struct Container {
            var isObject: Bool
            var expectsKey: Bool
            var keys: Set<String> = []
            var lastKey: String?
            var index = 0
        }
        var stack: [Container] = []
        var path: [String] = []
        let bytes = [UInt8](data)
        var position = 0
        func label(_ container: Container) -> String {
            container.isObject ? (container.lastKey ?? "") : "[\(container.index)]"
        }
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                let start = position
                position += 1
                while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                    position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
                }
                if var top = stack.last, top.isObject, top.expectsKey {
                    let token = Data(bytes[start...min(position, bytes.count - 1)])
                    let key = (try? JSONSerialization.jsonObject(with: token, options: .fragmentsAllowed)) as? String ?? ""
                    guard top.keys.insert(key).inserted else {
                        return (path + [key]).joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
                    }
                    top.lastKey = key
                    top.expectsKey = false
                    stack[stack.count - 1] = top
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if let top = stack.last { path.append(label(top)) }
                stack.append(Container(isObject: byte == UInt8(ascii: "{"), expectsKey: byte == UInt8(ascii: "{")))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                stack.removeLast()
                if !stack.isEmpty { path.removeLast() }
            case UInt8(ascii: ","):
                if stack.last?.isObject == true { stack[stack.count - 1].expectsKey = true }
                if stack.last?.isObject == false { stack[stack.count - 1].index += 1 }
            default:
                break
            }
            position += 1
        }
        return nil
    }
}
