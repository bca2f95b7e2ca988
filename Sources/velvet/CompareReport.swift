import Foundation
import VelvetFiles
import VelvetBeauty
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// The self-contained HTML A/B report: every image inline as a PNG data URL, no scripts,
/// no outside resources.
struct CompareReport {
    let context: GPUContext
    let capture: CompareEffect.Capture
    let face: BeautyFace
    let names: (String, String)
    let metrics: [[String: Double?]]
    let timings: [[String: Double]]
    let input: String
    let frames: Int

    /// The quality bars of docs/QUALITY.md: (key, label, bar, passes).
    static let bars: [(String, String, String, @Sendable (Double) -> Bool)] = [
        ("M4_features_ssim", "M4 features kept (SSIM in eyes, brows, lips)", "≥ 0.98", { $0 >= 0.98 }),
        ("M5_mid_band_ratio", "M5 blemishes smoothed (mid-band energy out/in)", "≤ 0.5", { $0 <= 0.5 }),
        ("M6_fine_band_ratio", "M6 texture kept (fine-band energy out/in)", "≥ 0.6 for freqsep", { $0 >= 0.6 }),
        ("M7_halo_p99", "M7 no halo (99th percentile outside the face)", "≤ 1/255", { $0 <= 1.0 / 255 + 1e-9 }),
        ("M8_colour_shift_de2000", "M8 colour kept (ΔE2000 on the cheeks)", "≤ 1.0", { $0 <= 1.0 }),
        ("M15a_still_change_levels", "M15a still face, still output (largest change, levels, every frame)", "≤ 1", { $0 <= 1 }),
        ("M15b_change_ratio", "M15b no jumpier than the source (frame-to-frame change out/in)", "≤ 1.0", { $0 <= 1.0 }),
        ("M15c_frames_without_beauty", "M15c frames where a face in view got no beauty", "0", { $0 == 0 }),
    ]

    func html() throws -> String {
        let before = try png(capture.input), imageA = try png(capture.a), imageB = try png(capture.b)
        let heatA = try png(heatMap(capture.a)), heatB = try png(heatMap(capture.b))
        let maskA = try png(grey(capture.weightsA)), maskB = try png(grey(capture.weightsB))
        let width = capture.input.width, height = capture.input.height
        var page = """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Velvet A/B: \(escape(names.0)) vs \(escape(names.1))</title>
        <style>
        body{font-family:sans-serif;margin:24px;background:#fafafa;color:#222} h1,h2{font-weight:600}
        .row{display:flex;gap:12px;flex-wrap:wrap} figure{margin:0} figcaption{font-size:13px;color:#555;margin-top:4px}
        img.full{width:360px;height:auto;border:1px solid #ccc} .crop{border:1px solid #ccc;background-repeat:no-repeat}
        table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:4px 8px;font-size:14px} .pass{color:#1a7f37} .fail{color:#c62828}
        .bar{height:12px;display:inline-block} .a{background:#4a78c2} .b{background:#d1812f}
        </style></head><body>
        <h1>Velvet A/B: <span class="a" style="color:#fff;padding:0 6px">A \(escape(names.0))</span> vs
        <span class="b" style="color:#fff;padding:0 6px">B \(escape(names.1))</span></h1>
        <p>\(escape(input)), \(frames) frames on \(escape(context.device.name)); images and M4-M8 from frame \(capture.frameIndex), the first with a face; M15 over every frame.</p>
        <h2>Results</h2><div class="row">
        <figure><img class="full" alt="before" src="\(before)"><figcaption>before</figcaption></figure>
        <figure><img class="full" alt="A" src="\(imageA)"><figcaption>A: \(escape(names.0))</figcaption></figure>
        <figure><img class="full" alt="B" src="\(imageB)"><figcaption>B: \(escape(names.1))</figcaption></figure></div>
        <h2>Zoomed crops</h2>
        """
        for (label, crop) in crops(width: width, height: height) {
            let zoom = 240.0 / Double(max(crop.width, 1))
            page += "<div class=\"row\">"
            for (caption, source) in [("before", before), ("A", imageA), ("B", imageB)] {
                page += "<figure><div class=\"crop\" role=\"img\" aria-label=\"\(label) \(caption)\" style=\"width:240px;height:\(Int(Double(crop.height) * zoom))px;"
                    + "background-image:url(\(source));background-size:\(Int(Double(width) * zoom))px \(Int(Double(height) * zoom))px;"
                    + "background-position:-\(Int(Double(crop.x) * zoom))px -\(Int(Double(crop.y) * zoom))px\"></div>"
                    + "<figcaption>\(label): \(caption)</figcaption></figure>"
            }
            page += "</div>"
        }
        page += """
        <h2>Difference from the input (luma x 10) and blend weights</h2><div class="row">
        <figure><img class="full" alt="difference A" src="\(heatA)"><figcaption>|A − before|</figcaption></figure>
        <figure><img class="full" alt="difference B" src="\(heatB)"><figcaption>|B − before|</figcaption></figure>
        <figure><img class="full" alt="mask A" src="\(maskA)"><figcaption>blend weight A</figcaption></figure>
        <figure><img class="full" alt="mask B" src="\(maskB)"><figcaption>blend weight B</figcaption></figure></div>
        <h2>Quality metrics</h2><table><tr><th>metric</th><th>bar</th><th>A \(escape(names.0))</th><th>B \(escape(names.1))</th></tr>
        """
        for (key, label, bar, passes) in Self.bars {
            page += "<tr><td>\(label)</td><td>\(bar)</td>"
            for side in metrics {
                if let value = side[key] ?? nil {
                    page += "<td class=\"\(passes(value) ? "pass" : "fail")\">\(String(format: "%.4f", value))</td>"
                } else {
                    page += "<td>not computable</td>"
                }
            }
            page += "</tr>"
        }
        page += "</table><h2>GPU time per frame (ms)</h2><table><tr><th>stage</th><th>A</th><th>B</th></tr>"
        let stages = Set(timings[0].keys).union(timings[1].keys).sorted()
        let longest = max(timings.flatMap(\.values).max() ?? 1, 1e-6)
        for stage in stages {
            page += "<tr><td>\(escape(stage))</td>"
            for (side, values) in zip(["a", "b"], timings) {
                let value = values[stage] ?? 0
                page += "<td><span class=\"bar \(side)\" style=\"width:\(Int(160 * value / longest))px\"></span> \(String(format: "%.3f", value))</td>"
            }
            page += "</tr>"
        }
        return page + "</table></body></html>\n"
    }

    /// Eyes, cheeks, jaw line and hairline, from the mesh.
    private func crops(width: Int, height: Int) -> [(String, PixelRegion)] {
        let iod = face.interOcularDistance
        func box(_ indices: [Int], grow: Float) -> PixelRegion {
            let points = indices.map { face.landmarks[$0] }
            let x0 = points.map(\.x).min()! - grow * iod, x1 = points.map(\.x).max()! + grow * iod
            let y0 = points.map(\.y).min()! - grow * iod, y1 = points.map(\.y).max()! + grow * iod
            let region = PixelRegion(x: Int(x0), y: Int(y0), width: Int(x1 - x0), height: Int(y1 - y0))
            return region.clamped(width: width, height: height) ?? PixelRegion(x: 0, y: 0, width: width, height: height)
        }
        return [("eyes", box([33, 133, 362, 263, 159, 145, 386, 374], grow: 0.25)),
                ("cheeks", box([50, 280, 117, 346], grow: 0.3)),
                ("jaw line", box([172, 136, 150, 149, 176, 148, 152, 377, 400, 378, 379, 365, 397], grow: 0.15)),
                ("hairline", box([10, 67, 297, 109, 338], grow: 0.3))]
    }

    private func heatMap(_ image: RGBImage) -> RGBImage {
        let a = capture.input.luma.values, b = image.luma.values
        return RGBImage(width: image.width, height: image.height, pixels: zip(a, b).map { before, after in
            let t = min(abs(after - before) * 10, 1)
            return SIMD3(min(2 * t, 1), max(2 * t - 1, 0), 0)
        })
    }

    private func grey(_ plane: PlaneImage) -> RGBImage {
        RGBImage(width: plane.width, height: plane.height, pixels: plane.values.map { SIMD3(repeating: min(max($0, 0), 1)) })
    }

    /// A PNG data URL of an image (encoded by Velvet's own writer through the GPU).
    private func png(_ image: RGBImage) throws -> String {
        let width = image.width & ~1, height = image.height & ~1
        let gpu = try GPUImage(context: context, width: image.width, height: image.height, format: .rgba32f)
        var texels: [Float] = []
        texels.reserveCapacity(image.pixels.count * 4)
        for pixel in image.pixels { texels += [pixel.x, pixel.y, pixel.z, 1] }
        let recorder = try CommandRecorder(context: context)
        try texels.withUnsafeBytes { try recorder.upload($0, to: gpu) }
        try recorder.submit().wait()
        let scratch = try ScratchFile("report.png")
        try ClipSynthesizer(context: context).write(photo: gpu, to: scratch.path, width: width, height: height, frames: 1) { _ in
            SimilarityTransform(translation: (x: Double(width - image.width) / 2, y: Double(height - image.height) / 2))
        }
        return "data:image/png;base64," + (try Data(contentsOf: URL(fileURLWithPath: scratch.path))).base64EncodedString()
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
