import CFFmpeg
import Foundation
import Synchronization

/// The first error line libav* logs during some work: why an encoder refuses to open (a
/// size DNxHD has no profile for, a missing libcuda for NVENC) is only logged. The callback
/// sees every message whatever `av_log_set_level` says. av_log's callback is global: one
/// capture runs at a time, only the capturing thread's messages are kept (a batch's other
/// workers log too), and the default callback is put back after it.
enum LogCapture {
    private static let lock = NSLock()
    /// The capturing thread (`pthread_self`), 0 when none.
    private static let owner = Atomic<UInt>(0)
    /// Written and read only by the owner.
    nonisolated(unsafe) private static var captured = ""

    static func firstError(_ work: () -> Int32) -> (result: Int32, logged: String) {
        lock.withLock {
            captured = ""
            owner.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
            av_log_set_callback { (object: UnsafeMutableRawPointer?, level: Int32, format: UnsafePointer<CChar>?, arguments: CVaListPointer?) in
                guard LogCapture.owner.load(ordering: .sequentiallyConsistent) == UInt(pthread_self()), level <= AV_LOG_ERROR,
                      LogCapture.captured.isEmpty, let format, let arguments else { return }
                var line = [CChar](repeating: 0, count: 512)
                var prefix: Int32 = 0
                av_log_format_line2(object, level, format, arguments, &line, Int32(line.count), &prefix)
                LogCapture.captured = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            let result = work()
            av_log_set_callback { object, level, format, arguments in
                if let arguments { av_log_default_callback(object, level, format, arguments) }
            }
            owner.store(0, ordering: .sequentiallyConsistent)
            return (result, captured)
        }
    }
}
