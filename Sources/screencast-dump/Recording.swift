import FrameSocket
import Foundation
import ScreencastSupport
import Synchronization

/// `record`'s state, shared by the server's reader thread, the progress timer and the main thread: the first
/// sender that sends anything is written byte for byte until its stream ends (or an interrupt).
final class Recording: Sendable {
    struct Summary {
        var connection: Int?
        var frames = 0
        /// Sound messages recorded (Protocol/frame-wire.md §2.10): their bytes are in the file like the pictures'.
        var sounds = 0
        var bytes = 0
        var writeError: String?
        var finished = false
        var outcome: SourceEndReason?
        /// When the first byte was recorded (CLOCK_MONOTONIC µs), nil before.
        var startMicros: UInt64?
        /// When the recording finished.
        var endMicros: UInt64 = 0
    }

    private let fd: Int32
    private let state = Mutex(Summary())
    private let done = DispatchSemaphore(value: 0)

    init(fd: Int32) { self.fd = fd }

    var summary: Summary { state.withLock { $0 } }

    /// Appends a chunk read from the first sender (chunks of later senders are not recorded).
    func write(_ chunk: UnsafeRawBufferPointer) {
        state.withLock { summary in
            guard !summary.finished, summary.writeError == nil else { return }
            if summary.startMicros == nil { summary.startMicros = MonotonicClock.nowMicros() }
            var offset = 0
            while offset < chunk.count {
                let count = Foundation.write(fd, chunk.baseAddress! + offset, chunk.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    summary.writeError = SystemErrorText.of(errno)
                    return
                }
                offset += count
            }
            summary.bytes += chunk.count
        }
    }

    func handle(_ event: FrameServerEvent) {
        switch event {
        case .senderConnected(let sender):
            state.withLock { if $0.connection == nil { $0.connection = sender.connection } }
        case .frame(_, let sender):
            state.withLock { if $0.connection == sender.connection, !$0.finished { $0.frames += 1 } }
        case .sound(_, let sender):
            state.withLock { if $0.connection == sender.connection, !$0.finished { $0.sounds += 1 } }
        case .senderEnded(let sender, let reason):
            // A connection that sent nothing (a probe, a sender that gave up) is not the one to record:
            // keep waiting for a sender with bytes.
            let isFirst = state.withLock { summary -> Bool in
                guard summary.connection == sender.connection else { return false }
                if summary.bytes == 0 {
                    summary.connection = nil
                    return false
                }
                return true
            }
            if isFirst { finish(reason) }
        case .senderRefused:
            break
        }
    }

    /// Ends the recording (the first sender's end, or nil for an interrupt); later calls do nothing.
    func finish(_ outcome: SourceEndReason?) {
        let first = state.withLock { summary -> Bool in
            guard !summary.finished else { return false }
            summary.finished = true
            summary.outcome = outcome
            summary.endMicros = MonotonicClock.nowMicros()
            return true
        }
        if first { done.signal() }
    }

    /// Blocks until ``finish(_:)``; returns the first sender's end reason, nil when interrupted.
    func wait() -> SourceEndReason? {
        done.wait()
        return state.withLock { $0.outcome }
    }
}
