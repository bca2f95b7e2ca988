import Foundation

/// A profiling aid: `VELVET_DISPATCH_TIMES=skin.,reshape` times every dispatch recorded in a
/// section whose label starts with one of the comma-separated prefixes as a section of its
/// own, `label/kernel` (the kernel with its specialisation, `ComputeKernel.label`; so
/// `--json`, `bench media` and the trace show what each kernel of a stage costs). Each adds two timestamps, and on most GPUs a timestamp waits for the work
/// before it, so the stage runs a little slower; a recorder keeps at most
/// `CommandRecorder.maxSections` sections, so leave the tracker's sections (hundreds of
/// dispatches) out.
enum DispatchTiming {
    static let prefixes: [String] = (ProcessInfo.processInfo.environment["VELVET_DISPATCH_TIMES"] ?? "")
        .split(separator: ",").map(String.init).filter { !$0.isEmpty }

    static func splits(_ label: String) -> Bool {
        !prefixes.isEmpty && prefixes.contains { label.hasPrefix($0) }
    }
}
