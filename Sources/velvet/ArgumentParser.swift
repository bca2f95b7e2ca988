/// A wrong command line; printed with the usage text and exit code 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Minimal `--name value` / `--flag` / positional parsing. Every option must be consumed:
/// `finish()` rejects anything left, so a typo is an error rather than silently ignored.
/// A repeated option keeps its last value, except where a command takes them all (`values`).
/// `-` is a positional argument (standard input or output, as in ffmpeg); after `--` every
/// argument is (a file named `-x.png`), as POSIX utilities take it.
struct ArgumentParser {
    /// Each option's values with their places on the line (for the last of two spellings).
    private var options: [String: [(place: Int, value: String)]] = [:]
    private var flags: Set<String> = []
    private(set) var positional: [String] = []
    /// An option last on the line with no value after it: a usage error in `finish()`, as a
    /// missing value if velvet has such an option, else as an unknown option (a typo).
    private var dangling: String?

    static let knownFlags: Set<String> = ["--json", "--quiet", "--beauty", "--no-effects", "--clear", "-y", "-n",
                                          "--allow-truncated", "--still", "--help", "-h", "--commands"]

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                for operand in arguments[(index + 1)...] {
                    guard !operand.isEmpty else { throw UsageError("an empty argument ('') names nothing") }
                    positional.append(operand)
                }
                break
            } else if Self.knownFlags.contains(argument) {
                flags.insert(argument)
            } else if argument.hasPrefix("--") || argument == "-o" {
                guard index + 1 < arguments.count else {
                    dangling = argument
                    break
                }
                // No option takes an empty value ('' names no file: compare made "<cwd>.json" from it).
                guard !arguments[index + 1].isEmpty else { throw UsageError("\(argument) needs a value, got an empty one ('')") }
                options[argument, default: []].append((index, arguments[index + 1]))
                index += 1
            } else {
                guard !argument.isEmpty else { throw UsageError("an empty argument ('') names nothing") }
                positional.append(argument)
            }
            index += 1
        }
    }

    mutating func value(_ name: String) -> String? { options.removeValue(forKey: name)?.last?.value }

    /// The last value of an option with two spellings (`-o`, `--output`), whichever came last.
    mutating func value(_ name: String, or alias: String) -> String? {
        let given = (options.removeValue(forKey: name) ?? []) + (options.removeValue(forKey: alias) ?? [])
        return given.max { $0.place < $1.place }?.value
    }

    /// The value `value(name)` would take, leaving it there.
    func peek(_ name: String) -> String? { options[name]?.last?.value }

    /// Every value of a repeatable option, in order.
    mutating func values(_ name: String) -> [String] { options.removeValue(forKey: name)?.map(\.value) ?? [] }

    /// Forgets every flag (`help`, whose text `--json` or `--quiet` beside it do not change).
    mutating func ignoreFlags() { flags.removeAll() }

    /// Whether the command line sends its output file to standard output (`-o -`): then
    /// nothing but the video may go there.
    static func writesMediaToStandardOutput(_ arguments: [String]) -> Bool {
        zip(arguments, arguments.dropFirst()).contains { ["-o", "--output"].contains($0.0) && $0.1 == "-" }
    }

    mutating func flag(_ name: String) -> Bool { flags.remove(name) != nil }

    /// Whether `name` was given, without taking it.
    func has(flag name: String) -> Bool { flags.contains(name) }
    func has(option name: String) -> Bool { options[name] != nil }

    mutating func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = value(name) else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return number
    }

    mutating func float(_ name: String, default fallback: Float, range: ClosedRange<Float>) throws -> Float {
        guard let text = value(name) else { return fallback }
        guard let number = Float(text), range.contains(number) else {
            throw UsageError("\(name) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return number
    }

    mutating func takePositional() -> String? { positional.isEmpty ? nil : positional.removeFirst() }

    func finish() throws {
        if let dangling {
            // Every option velvet has is in its usage text, with its value's name after it.
            let known = VelvetCommand.usage.contains(dangling + " ")
            throw UsageError(known ? "\(dangling) needs a value" : "unknown option \(dangling)")
        }
        if let name = options.keys.sorted().first { throw UsageError("unknown option \(name)") }
        if let name = flags.sorted().first { throw UsageError("unexpected flag \(name)") }
        if let extra = positional.first { throw UsageError("unexpected argument '\(extra)'") }
    }
}
