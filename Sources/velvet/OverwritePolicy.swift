import VelvetFiles

/// What to do with an output file that already exists: ffmpeg's `-y` (overwrite) and `-n`
/// (never). With neither, velvet answers as ffmpeg does when it has no terminal to ask: it
/// does not overwrite. (`batch` differs only in re-rendering outputs it can prove it wrote
/// for other inputs or settings; see BatchCommand.)
enum OverwritePolicy {
    /// `-y`, `-n`, neither.
    case overwrite, never, unspecified

    static func parse(_ arguments: inout ArgumentParser) throws -> OverwritePolicy {
        switch (arguments.flag("-y"), arguments.flag("-n")) {
        case (true, true): throw UsageError("-y and -n contradict each other: give one")
        case (true, false): return .overwrite
        case (false, true): return .never
        case (false, false): return .unspecified
        }
    }

    /// How a finished output is moved into place: replacing only with `-y`; otherwise a file
    /// that appeared during the work makes the commit fail instead of being clobbered.
    var commit: CommitPolicy { self == .overwrite ? .replace : .noClobber }
}
