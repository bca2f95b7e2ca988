import Foundation
import VelvetBeauty
import VelvetPipeline

/// `velvet presets list | show NAME|FILE | save NAME [--preset BASE] [beauty flags] | delete NAME
///  | default [NAME | --clear] | knobs`: the built-in and saved presets (JSON files in
/// $XDG_CONFIG_HOME/velvet/presets/). The default preset applies to every render that
/// does not name one.
enum PresetsCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let store = PresetStore.standard()
        switch arguments.takePositional() {
        case "list":
            try arguments.finish()
            // A broken default-preset file, or a default preset that does not load, is reported,
            // not a reason to list nothing.
            do {
                _ = try store.defaultName()
                do { _ = try store.defaultPreset() } catch { printError("velvet: warning: \(error)") }
            } catch {
                printError("velvet: warning: \(error) (velvet presets default NAME|--clear fixes it)")
            }
            for path in store.hiddenByBuiltIns() {
                printError("velvet: warning: \(path) is not used: a built-in preset has its name (rename the file to use it)")
            }
            for entry in try store.list() {
                print(entry.name + (entry.isBuiltIn ? "  (built-in)" : "") + (entry.isDefault ? "  (default)" : ""))
            }
        case "show":
            guard let name = arguments.takePositional() else { throw UsageError("presets show needs a NAME") }
            try arguments.finish()
            let preset = try BeautyArguments.preset(named: name, store: store)
            print(String(decoding: try preset.encoded(), as: UTF8.self))
        case "save":
            guard let name = arguments.takePositional() else { throw UsageError("presets save needs a NAME") }
            guard PresetStore.isValidName(name) else { throw UsageError("\(name) is \(PresetStore.nameRule)") }
            let policy = try OverwritePolicy.parse(&arguments)
            var preset = try BeautyArguments.basePreset(&arguments, store: store)
            try BeautyArguments.apply(&arguments, to: &preset)
            try arguments.finish()
            try preset.validate(file: "command line")
            try checkLUT(of: preset)
            // Saved with its full path: a relative one would be read from wherever a later render runs.
            if case .file(let lut) = preset.lut.source { preset.lut.source = .file(URL(fileURLWithPath: lut).standardizedFileURL.path) }
            try store.save(preset, as: name, replacing: policy == .overwrite)
            print("saved \(store.fileURL(name).path)")
        case "delete":
            guard let name = arguments.takePositional() else { throw UsageError("presets delete needs a NAME") }
            try arguments.finish()
            guard PresetStore.isValidName(name) else { throw UsageError("\(name) is \(PresetStore.nameRule)") }
            try store.delete(name)
        case "default":
            let clear = arguments.flag("--clear")
            let name = arguments.takePositional()
            try arguments.finish()
            if clear, let name { throw UsageError("presets default takes a NAME or --clear, not both (got \(name) and --clear)") }
            if let name, BeautyPreset.builtIn(name) == nil, !PresetStore.isValidName(name) {
                throw UsageError("\(name) is \(PresetStore.nameRule)")
            }
            if clear || name != nil {
                if let name, BeautyPreset.builtIn(name) == nil { try checkLUT(of: try store.load(name)) }
                try store.setDefault(clear ? nil : name)
            }
            print(try store.defaultName() ?? "\(BeautyPreset.shippedDefaultName) (built-in; no default set)")
        case "knobs":
            // Every preset field and flag, as docs/CLI.md's table (a test checks the doc against it).
            try arguments.finish()
            print(KnobTable.markdown(), terminator: "")
        default:
            throw UsageError("presets takes list, show NAME, save NAME [flags], delete NAME, default [NAME|--clear] or knobs")
        }
    }

    /// A preset's LUT file must be there and readable when it is saved or made the default,
    /// not found missing by every render after.
    private static func checkLUT(of preset: BeautyPreset) throws {
        if case .file(let path) = preset.lut.source { try LUTLoader.check(path) }
    }
}
