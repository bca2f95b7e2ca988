import Foundation
import VelvetGPU
#if canImport(Glibc)
import Glibc

// Frame-sized buffers (a few MB, allocated and freed on different threads every frame) stay
// in mmap'd memory returned to the system on free. glibc otherwise raises its mmap threshold
// after the first such free and serves them from the heap, which fragments: a 10,000-frame
// render grew 6.4 % in steps of one frame's size (0.55 % with the threshold fixed; see
// docs/RELIABILITY.md, Soak). Setting the threshold turns that adjustment off. mallopt is
// looked up at run time because Swift's Glibc module does not export <malloc.h>.
if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
    typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
    let mmapThreshold: Int32 = -3 // M_MMAP_THRESHOLD
    _ = unsafeBitCast(symbol, to: MallOpt.self)(mmapThreshold, 128 * 1024)
}
#endif

_ = StandardStreams.closedAtStart
OpenFileLimit.raise()
TerminationSignals.install()
// Swift repairs arguments that are not UTF-8 (U+FFFD for each bad byte), so a file name in
// another encoding would be opened or written under a different name: such arguments are refused.
let notUTF8 = (1..<Int(CommandLine.argc)).filter { index in
    CommandLine.unsafeArgv[index].map { String(validatingCString: $0) == nil } ?? false
}
let status = VelvetCommand.run(Array(CommandLine.arguments.dropFirst()), notUTF8: notUTF8.map { $0 - 1 })
GPUContext.stopCompilingBeforeExit()
TerminationSignals.exit(status)
