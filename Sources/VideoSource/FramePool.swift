import Media
import ScreencastSupport
import Synchronization

/// A few I420 buffers handed round between capturers and the encoder thread, so steady streaming
/// allocates no pixel storage: a capturer takes one, fills it and submits it; the encoder thread gives
/// it back when a newer picture replaces it (or when it is dropped).
///
/// Memory follows the pictures: every `take` names the size it is for, and the largest of the last
/// eight is "the current picture". A buffer whose allocation is more than `oversizeFactor` times that
/// (and above `oversizeFloorBytes`) is freed instead of kept, both in the pool and when it comes back,
/// so one huge picture followed by small ones does not pin its memory; sizes that alternate (1080p and
/// 720p) keep their buffers. After freeing, `malloc_trim` hands the pages back to the system.
final class FramePool: Sendable {
    private struct State {
        var buffers: [I420Buffer] = []
        /// Byte counts asked for by the last takes.
        var recent = RecentMaximum(count: 8)
        /// Buffers freed for being oversized, since the pool was made.
        var released = 0
    }

    private let state: Mutex<State>
    /// Buffers kept at most; beyond that, returned buffers are freed.
    let capacity: Int
    /// A buffer is oversized above this many times the current picture's bytes.
    static let oversizeFactor = 2
    /// Buffers up to this size are never freed as oversized (small pictures are not worth the churn).
    static let oversizeFloorBytes = 256 * 1024

    init(capacity: Int = 4) {
        self.capacity = capacity
        var initial = State()
        initial.buffers.reserveCapacity(capacity)
        state = Mutex(initial)
    }

    /// A buffer to fill with a `width`×`height` picture: a pooled one (the smallest that holds it
    /// without reallocating, else any) or a new one. Frees pooled buffers that are oversized for it.
    func take(width: Int, height: Int) -> I420Buffer {
        let need = I420Buffer.byteCount(width: max(0, width), height: max(0, height))
        var freed: [I420Buffer] = []
        let buffer = state.withLock { s -> I420Buffer? in
            s.recent.record(need)
            let limit = Self.oversizeLimit(s.recent.maximum)
            if s.buffers.contains(where: { $0.bytes.capacity > limit }) {
                freed = s.buffers.filter { $0.bytes.capacity > limit }
                s.buffers.removeAll { $0.bytes.capacity > limit }
                s.released += freed.count
            }
            let fitting = s.buffers.indices.filter { s.buffers[$0].bytes.capacity >= need }
            if let best = fitting.min(by: { s.buffers[$0].bytes.capacity < s.buffers[$1].bytes.capacity }) {
                return s.buffers.remove(at: best)
            }
            return s.buffers.popLast()
        }
        release(&freed)
        return buffer ?? I420Buffer()
    }

    /// Gives a buffer back. It must not be used by the caller afterwards (copies of it would share storage).
    func recycle(_ buffer: consuming I420Buffer) {
        var freed: [I420Buffer] = [buffer]
        state.withLock { s in
            let returned = freed.removeLast()
            if returned.bytes.capacity > Self.oversizeLimit(s.recent.maximum) {
                s.released += 1
                freed.append(returned)
            } else if s.buffers.count < capacity {
                s.buffers.append(returned)
            }
        }
        release(&freed)
    }

    /// Buffers waiting to be reused.
    var available: Int { state.withLock { $0.buffers.count } }

    /// Bytes allocated by the buffers waiting to be reused (their capacity, not their picture's size).
    var retainedBytes: Int { state.withLock { $0.buffers.reduce(0) { $0 + $1.bytes.capacity } } }

    /// Buffers freed because they were oversized for the pictures that followed.
    var releasedBuffers: Int { state.withLock { $0.released } }

    private static func oversizeLimit(_ currentBytes: Int) -> Int {
        max(oversizeFloorBytes, currentBytes * oversizeFactor)
    }

    /// Frees `buffers` outside the lock; after a large one, asks glibc to return free pages to the system
    /// (buffers below the mmap threshold would otherwise stay in the heap).
    private func release(_ buffers: inout [I420Buffer]) {
        guard !buffers.isEmpty else { return }
        let bytes = buffers.reduce(0) { $0 + $1.bytes.capacity }
        buffers.removeAll()
        if bytes >= 4 * 1024 * 1024 { GlibcMalloc.trim() }
    }
}
