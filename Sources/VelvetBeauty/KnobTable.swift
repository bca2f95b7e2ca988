import Foundation

/// docs/CLI.md's table of every preset field and flag, made from `BeautyPreset.knobs`
/// (`velvet presets knobs` prints it; a test checks the doc holds exactly this).
public enum KnobTable {
    /// The Markdown table: preset field, flag, values, the value a missing field takes, the
    /// shipped default preset's value, and what it does.
    public static func markdown() -> String {
        let fallback = BeautyPreset()
        let shipped = BeautyPreset.shippedDefault
        var lines = ["| preset field | flag | values | missing field | `\(BeautyPreset.shippedDefaultName)` | what it does |",
                     "|---|---|---|---|---|---|"]
        for knob in BeautyPreset.knobs {
            let cells = ["`\(knob.key)`", knob.flag.map { "`\($0)`" } ?? "—", values(knob.values),
                         text(knob.value(in: fallback)), text(knob.value(in: shipped)), knob.help]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        // The LUT's source is one of two keys, not a knob (`--lut NAME|FILE` sets it and the strength to 1).
        let builtIns = BuiltInLUT.allCases.map { "`\"\($0.rawValue)\"`" }.joined(separator: ", ")
        let shippedLUT: String
        switch shipped.lut.source {
        case .builtIn(let name): shippedLUT = "`\"\(name.rawValue)\"`"
        case .file(let path): shippedLUT = "`\"\(path)\"`"
        case .none: shippedLUT = "none"
        }
        lines.append("| `lut.builtIn` | `--lut NAME` | \(builtIns) | none | \(shippedLUT) | a built-in grade (not with `lut.file`) |")
        lines.append("| `lut.file` | `--lut FILE` | path to a `.cube` or 512×512 `.png` LUT, not empty | none | — | a grade from a file (not with `lut.builtIn`) |")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func values(_ values: KnobValues) -> String {
        switch values {
        case .number(let range): return "\(number(range.lowerBound))–\(number(range.upperBound))"
        case .choice(let names): return names.map { "`\"\($0)\"`" }.joined(separator: ", ")
        case .colour: return "`\"#RRGGBB\"`"
        }
    }

    private static func text(_ value: KnobValue) -> String {
        switch value {
        case .number(let value): return number(value)
        case .text(let text): return "`\"\(text)\"`"
        }
    }

    /// 1 not 1.0, 0.15 not 0.15000001.
    public static func number(_ value: Float) -> String {
        if value == value.rounded() { return String(Int(value)) }
        var text = String(format: "%.4f", Double(value))
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
