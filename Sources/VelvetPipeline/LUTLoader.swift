import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetMedia

/// Loads a colour LUT file: `.cube` text, or a 512x512 "lookup" PNG (8x8 tiles of 64^3).
public enum LUTLoader {
    /// What can be checked without a GPU (a preset being saved): the file is there and is a
    /// `.cube` that parses, or a `.png` that decodes to 512x512.
    public static func check(_ path: String) throws {
        guard try format(of: path) == "png" else { _ = try CubeLUTParser.load(path); return }
        // Decoded on the CPU: a picture that does not decode, or of another size, is refused
        // now rather than by every render that takes the preset.
        let size: (width: Int, height: Int)
        do { size = try ImageLoader.decodedSize(of: path) } catch {
            throw LUTError(path: path, line: nil, reason: "cannot read the image: \(error)")
        }
        guard size == (512, 512) else {
            throw LUTError(path: path, line: nil, reason: "a lookup-image LUT must be 512x512, got \(size.width)x\(size.height)")
        }
    }

    /// "cube" or "png", for a file that exists.
    private static func format(of path: String) throws -> String {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LUTError(path: path, line: nil, reason: "no such file (give a .cube or 512x512 .png LUT, or a built-in: "
                           + BuiltInLUT.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw LUTError(path: path, line: nil, reason: "is a folder, not a LUT file (give a .cube or 512x512 .png LUT)")
        }
        let format = URL(fileURLWithPath: path).pathExtension.lowercased()
        guard ["cube", "png"].contains(format) else {
            throw LUTError(path: path, line: nil, reason: "unknown LUT format (use .cube or a 512x512 .png)")
        }
        return format
    }

    public static func load(_ path: String, context: GPUContext) throws -> ColorLUT {
        switch try format(of: path) {
        case "cube": return try CubeLUTParser.load(path)
        case "png":
            let image: GPUImage
            do { image = try ImageLoader.load(path, context: context) } catch {
                throw LUTError(path: path, line: nil, reason: "cannot read the image: \(error)")
            }
            guard image.width == 512, image.height == 512 else {
                throw LUTError(path: path, line: nil, reason: "a lookup-image LUT must be 512x512, got \(image.width)x\(image.height)")
            }
            let recorder = try CommandRecorder(context: context)
            let readback = try recorder.download(image)
            try recorder.submit().wait()
            let halves = readback.raw.bindMemory(to: UInt16.self)
            let colours = (0..<(512 * 512)).map { index in
                SIMD3<Float>(Float(Float16(bitPattern: halves[index * 4])), Float(Float16(bitPattern: halves[index * 4 + 1])),
                             Float(Float16(bitPattern: halves[index * 4 + 2])))
            }
            return try ColorLUT.fromLookupImage(colours, width: 512, height: 512, path: path)
        default:
            throw LUTError(path: path, line: nil, reason: "unknown LUT format (use .cube or a 512x512 .png)")
        }
    }
}
