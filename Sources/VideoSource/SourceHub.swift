import Dispatch
import Media
import Synchronization

/// A picture waiting for the encoder, tagged with the source generation it was submitted in.
struct PendingFrame: Sendable {
    var frame: VideoFrame
    /// Incremented at every switch of the active source; the first frame of a new generation is encoded
    /// as a keyframe and never treated as unchanged.
    var generation: Int
    var kind: SourceKind
}

/// Where capturers and the encoder thread meet: which source is active, the one-frame slot (latest
/// frame wins), and the requests (keyframe, bitrate, stop) the encoder thread picks up.
///
/// Capturers call `submit`; it never blocks on encoding. A frame that replaces a waiting one makes the
/// waiting one stale (counted, its buffer recycled); a frame from an inactive capturer is dropped.
final class SourceHub: Sendable {
    private struct State {
        var active: SourceKind?
        var generation = 0
        var pending: PendingFrame?
        var keyframeRequested = false
        var bitrateChange: Int??
        var cadenceChange: Int??
        var stopping = false
        /// The sharer paused the share (``setPaused(_:)``): new pictures are dropped, the last one stays.
        var paused = false
        /// A picture another encoder handed over (its planes shared with that encoder's buffers), waiting to be
        /// scaled into one of this hub's own buffers (``SecondEncoding``). Never recycled into `pool`.
        var foreign: (frame: VideoFrame, kind: SourceKind)?
        /// The encoder thread has been signalled and has not waited since (so one signal is enough).
        var wakePending = false
    }

    /// What the encoder thread learns each time round its loop.
    struct Requests {
        var hasPending: Bool
        var keyframeRequested: Bool
        /// nil: no change; .some(nil): back to the default bitrate; .some(k): k kbps.
        var bitrateChange: Int??
        /// nil: no change; .some(nil): the droppable cadence off; .some(n): one reference frame in n.
        var cadenceChange: Int??
        var stopping: Bool
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    let stats: StatsRecorder
    let pool: FramePool

    init(stats: StatsRecorder, pool: FramePool) {
        self.stats = stats
        self.pool = pool
    }

    /// The active source (nil: none).
    var active: SourceKind? { state.withLock { $0.active } }

    /// Makes `kind` the active source; returns false when it already was. Starts a new generation.
    @discardableResult
    func activate(_ kind: SourceKind?) -> Bool {
        let changed = state.withLock { s -> Bool in
            guard s.active != kind else { return false }
            s.active = kind
            s.generation += 1
            return true
        }
        if changed {
            stats.activeSource(kind)
            wakeEncoder()
        }
        return changed
    }

    /// Offers a picture from capturer `kind`. Never blocks on the encoder.
    func submit(_ frame: VideoFrame, from kind: SourceKind) {
        var frame: VideoFrame? = frame
        var replaced: VideoFrame?
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping, !s.paused, s.active == kind, let incoming = frame.take() else { return false }
            replaced = s.pending.take()?.frame
            s.pending = PendingFrame(frame: incoming, generation: s.generation, kind: kind)
            return true
        }
        if accepted {
            stats.submitted()
            wakeEncoder()
        } else if let frame {
            stats.dropped(.inactive)
            pool.recycle(frame.picture)
        }
        if let replaced {
            stats.dropped(.stale)
            pool.recycle(replaced.picture)
        }
    }

    /// Pauses or resumes taking new pictures (the sharer's pause): while paused every submitted picture is dropped
    /// (counted as ``DropReason/inactive``) and the encoder keeps the last one. Returns false when nothing changed.
    @discardableResult
    func setPaused(_ paused: Bool) -> Bool {
        state.withLock { s -> Bool in
            guard s.paused != paused else { return false }
            s.paused = paused
            return true
        }
    }

    /// Whether the share is paused.
    var isPaused: Bool { state.withLock { $0.paused } }

    /// Offers a picture whose planes another encoder still uses (``SecondEncoding``): it replaces a foreign
    /// picture still waiting (released, not recycled: the buffer is not this hub's) and wakes the encoder
    /// thread, which copies it into a buffer of its own pool at once (``takeForeign()``). Never blocks.
    func submitForeign(_ frame: VideoFrame, kind: SourceKind) {
        var replaced: (frame: VideoFrame, kind: SourceKind)?
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            replaced = s.foreign
            s.foreign = (frame, kind)
            return true
        }
        if replaced != nil { stats.dropped(.stale) }
        if accepted { wakeEncoder() }
    }

    /// Takes the foreign picture waiting, if any (encoder thread).
    func takeForeign() -> (frame: VideoFrame, kind: SourceKind)? { state.withLock { $0.foreign.take() } }

    /// Asks for a keyframe (coalesced with one not yet picked up, counted; the encoder thread spaces them).
    func requestKeyframe() {
        let coalesced = state.withLock { s -> Bool in
            defer { s.keyframeRequested = true }
            return s.keyframeRequested
        }
        stats.keyframeRequested()
        if coalesced { stats.keyframeCoalesced() }
        wakeEncoder()
    }

    /// Asks for another bitrate (nil: the default for the current size).
    func requestBitrate(_ kbps: Int?) {
        state.withLock { $0.bitrateChange = .some(kbps) }
        wakeEncoder()
    }

    /// Asks for a droppable cadence of one reference frame in `period` new frames (nil: off).
    func requestDroppableCadence(_ period: Int?) {
        state.withLock { $0.cadenceChange = .some(period) }
        wakeEncoder()
    }

    /// Stops accepting frames; the encoder thread encodes what waits and ends.
    func stop() {
        state.withLock {
            $0.stopping = true
            $0.foreign = nil
        }
        wakeEncoder()
    }

    /// Takes the pending requests (encoder thread).
    func takeRequests() -> Requests {
        state.withLock { s in
            defer {
                s.keyframeRequested = false
                s.bitrateChange = nil
                s.cadenceChange = nil
            }
            return Requests(hasPending: s.pending != nil, keyframeRequested: s.keyframeRequested,
                            bitrateChange: s.bitrateChange, cadenceChange: s.cadenceChange, stopping: s.stopping)
        }
    }

    /// Takes the waiting frame (encoder thread).
    func takePending() -> PendingFrame? { state.withLock { $0.pending.take() } }

    /// Frames waiting (0 or 1).
    var queueDepth: Int { state.withLock { $0.pending == nil ? 0 : 1 } }

    /// Signals the encoder thread once per wait: frames arriving while it encodes add no signals.
    private func wakeEncoder() {
        let signal = state.withLock { s -> Bool in
            defer { s.wakePending = true }
            return !s.wakePending
        }
        if signal { wake.signal() }
    }

    /// Blocks the encoder thread until something is submitted or requested, or for `micros` at most
    /// (nil: no limit).
    func wait(micros: UInt64?) {
        // A signal that arrives after this is kept by the semaphore, so nothing is missed.
        state.withLock { $0.wakePending = false }
        if let micros {
            _ = wake.wait(timeout: .now() + .microseconds(Int(min(micros, 60_000_000))))
        } else {
            wake.wait()
        }
    }
}
