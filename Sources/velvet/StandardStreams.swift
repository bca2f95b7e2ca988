import Foundation

/// Standard input, output and error closed when the process started (`velvet … >&-`). Each is
/// opened on /dev/null at once, so that no file Velvet opens later takes its number and gets
/// what was meant for the stream (a model file read as `-`, a partial output written by
/// `--json`); a command that would use a closed stream is refused instead.
enum StandardStreams {
    /// The descriptors (0, 1, 2) that were closed. Read first in `main`, before anything is opened.
    static let closedAtStart: Set<Int32> = {
        var closed = Set<Int32>()
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // open() takes the lowest free number: this one, the lower ones being open by now.
            _ = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            closed.insert(descriptor)
        }
        return closed
    }()

    static var inputIsClosed: Bool { closedAtStart.contains(STDIN_FILENO) }
    static var outputIsClosed: Bool { closedAtStart.contains(STDOUT_FILENO) }
}
