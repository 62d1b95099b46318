import Media
import Synchronization

/// A few I420 buffers handed round between capturers and the encoder thread, so steady streaming
/// allocates no pixel storage: a capturer takes one, fills it and submits it; the encoder thread gives
/// it back when a newer picture replaces it (or when it is dropped).
final class FramePool: Sendable {
    private let buffers: Mutex<[I420Buffer]>
    /// Buffers kept at most; beyond that, returned buffers are freed.
    let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
        var initial: [I420Buffer] = []
        initial.reserveCapacity(capacity)
        buffers = Mutex(initial)
    }

    /// A buffer to fill: a returned one (any size; `resize` reuses its storage when it can) or a new one.
    func take() -> I420Buffer {
        buffers.withLock { $0.popLast() } ?? I420Buffer()
    }

    /// Gives a buffer back. It must not be used by the caller afterwards (copies of it would share storage).
    func recycle(_ buffer: consuming I420Buffer) {
        let buffer = buffer
        buffers.withLock { list in
            if list.count < capacity { list.append(buffer) }
        }
    }

    /// Buffers waiting to be reused (tests).
    var available: Int { buffers.withLock { $0.count } }
}
