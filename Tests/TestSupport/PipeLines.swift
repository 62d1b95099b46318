import Foundation
import Synchronization

/// A child process's output read line by line (LF-separated, UTF-8) on a thread of its own until the pipe
/// closes; the lines so far are readable at any time.
public final class PipeLines: Sendable {
    private let lines = Mutex<[String]>([])
    private let closed = DispatchSemaphore(value: 0)

    /// Starts reading `pipe` (its read end) at once.
    public init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                guard let chunk = POSIXPipeRead.chunk(handle.fileDescriptor) else { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
            closed.signal()
        }
    }

    /// The complete lines read so far.
    public var all: [String] { lines.withLock { $0 } }

    /// Waits up to `timeout` seconds for the writer to close the pipe; true when it did.
    @discardableResult
    public func waitUntilClosed(timeout: Double = 2) -> Bool { closed.wait(timeout: .now() + timeout) == .success }
}
