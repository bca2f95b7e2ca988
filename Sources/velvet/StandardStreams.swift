import Foundation

/// Standard input, output and error closed when the process started (`velvet … >&-`). Each is
/// opened on /dev/null at once, so that no file Velvet opens later takes its number and gets
/// what was meant for the stream (a model file read as `-`, a partial output written by
/// `--json`). Input and output are opened the wrong way round, so that a read or write still
/// fails as on the closed descriptor (any command's text on stdout: "Bad file descriptor", exit 1,
/// not lost in /dev/null); `render` refuses a closed stream it would use up front, by name.
enum StandardStreams {
    /// The descriptors (0, 1, 2) that were closed. Read first in `main`, before anything is opened.
    static let closedAtStart: Set<Int32> = {
        var closed = Set<Int32>()
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // open() takes the lowest free number: this one, the lower ones being open by now.
            _ = open("/dev/null", descriptor == STDOUT_FILENO ? O_RDONLY : O_WRONLY)
            closed.insert(descriptor)
        }
        return closed
    }()

    static var inputIsClosed: Bool { closedAtStart.contains(STDIN_FILENO) }
    static var outputIsClosed: Bool { closedAtStart.contains(STDOUT_FILENO) }
}
