import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetPipeline

/// `velvet bench quality PHOTO... [beauty options] [--json]`: the skin metrics M3-M8 of
/// every face found in each photo, rendered through the product's own path with the
/// default preset (or the options given). Makeup, reshape and the colour grade are turned
/// off, as the metrics' definitions ask (M8 judges the skin's own colour; M5 compares the
/// input's mesh regions, which a reshape would move). Prints a table, or JSON.
enum BenchQualityCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        var photos: [String] = []
        while let photo = arguments.takePositional() { photos.append(photo) }
        let json = arguments.flag("--json")
        let request = arguments.value("--device")
        // It measures the skin with makeup, reshape and the grade off, as M5 and M8 ask: options
        // that would draw another picture or be dropped are refused, not measured or ignored.
        if let option = ["--debug-view", "--lut", "--lut-strength", "--lut-on"].first(where: { arguments.has(option: $0) }) {
            throw UsageError("bench quality measures the skin stages with the grade, makeup and reshape off: \(option) does not apply")
        }
        let context = try GPUContext(request: request)
        guard var options = try BeautyArguments.parse(&arguments, store: .standard(), loadLUT: { try LUTLoader.load($0, context: context) })
        else { throw UsageError("bench quality measures the beauty pipeline: --no-effects has nothing to measure") }
        try arguments.finish()
        guard !photos.isEmpty else { throw UsageError("bench quality needs one or more PHOTO files") }
        if photos.contains(CommandFiles.standardStream) {
            throw UsageError("- (standard input) works only with velvet render, which reads its input once: give a file")
        }
        options.makeup = .off
        options.reshape = .off
        options.grade = nil

        let probe = try StillQualityProbe(context: context, options: options)
        let results = try photos.map { try probe.measure(path: $0) }
        if json {
            let data = try JSONSerialization.data(withJSONObject: ["device": context.device.name, "photos": results.map(describe)],
                                                  options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(table(results))
        }
        try ValidationReport.check(context)
    }

    static func describe(_ still: StillQuality) -> [String: Any] {
        [
            "path": still.path, "width": still.width, "height": still.height,
            "M3_background_max_diff": still.m3Background as Any? ?? NSNull(),
            "faces": still.faces.map { face -> [String: Any] in
                [
                    "track_id": face.trackID, "iod": Double(face.interOcularDistance),
                    "box": [Double(face.box.x), Double(face.box.y), Double(face.box.width), Double(face.box.height)],
                    "M4_features_ssim": face.m4FeatureSSIM as Any? ?? NSNull(),
                    "M5_mid_band_ratio": face.m5MidBandRatio as Any? ?? NSNull(),
                    "M6_fine_band_ratio": face.m6FineBandRatio as Any? ?? NSNull(),
                    "M7_halo_p99": face.m7Halo as Any? ?? NSNull(),
                    "M8_colour_shift_de2000": face.m8ColourShift as Any? ?? NSNull(),
                ]
            },
        ]
    }

    static func table(_ results: [StillQuality]) -> String {
        func cell(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "-" }
        var lines = ["| photo | face | IOD px | M3 | M4 | M5 | M6 | M7 x255 | M8 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        var midBands: [Double] = []
        for still in results {
            let name = URL(fileURLWithPath: still.path).lastPathComponent
            let m3 = still.m3Background.map(String.init) ?? "-"
            if still.faces.isEmpty { lines.append("| \(name) | none | | \(m3) | | | | | |") }
            for (index, face) in still.faces.enumerated() {
                if let m5 = face.m5MidBandRatio { midBands.append(m5) }
                lines.append("| \(name) | \(index + 1) | \(String(format: "%.0f", face.interOcularDistance)) | \(m3) | "
                             + "\(cell(face.m4FeatureSSIM, "%.4f")) | \(cell(face.m5MidBandRatio, "%.3f")) | "
                             + "\(cell(face.m6FineBandRatio, "%.3f")) | \(cell(face.m7Halo.map { $0 * 255 }, "%.1f")) | "
                             + "\(cell(face.m8ColourShift, "%.2f")) |")
            }
        }
        if let low = midBands.min(), let high = midBands.max() {
            let sorted = midBands.sorted()
            lines.append(String(format: "\nM5 over %d faces: min %.3f, median %.3f, max %.3f (spread %.3f)",
                                sorted.count, low, sorted.median, high, high - low))
        }
        return lines.joined(separator: "\n")
    }
}
