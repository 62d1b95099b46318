/// The frames waiting to be written to one destination, bounded by the seed's rule: when more than
/// ``limit`` frames wait (about a second), the stale ones go, and what stays still decodes.
///
/// ```
///  push ─▶ [K p p p K p p p p … ] ─▶ pop (the writer thread)
///          over the limit: drop everything before the newest waiting keyframe;
///          no keyframe waiting: drop all, ask for one, and drop new non-key frames until it comes
/// ```
/// A non-key frame is never sent after a gap (it would refer to a frame the server never got), so a drop
/// always ends at a keyframe. Sans-I/O: a value type the destination keeps under its lock; tests drive it.
public struct SendQueue<Frame: Sendable>: Sendable {
    /// One waiting frame.
    public struct Item: Sendable {
        public var frame: Frame
        public var isKeyframe: Bool
        /// Its timestamp, µs (for the queue's length in time).
        public var micros: UInt64
        public init(frame: Frame, isKeyframe: Bool, micros: UInt64) {
            self.frame = frame
            self.isKeyframe = isKeyframe
            self.micros = micros
        }
    }

    /// What a push did beyond queueing.
    public struct Outcome: Sendable, Equatable {
        /// Frames dropped by this push (the new one included when it was dropped).
        public var dropped = 0
        /// The encoding must make a keyframe (nothing decodable waits any more).
        public var needsKeyframe = false

        public init(dropped: Int = 0, needsKeyframe: Bool = false) {
            self.dropped = dropped
            self.needsKeyframe = needsKeyframe
        }
    }

    /// More than this many frames waiting triggers a drop.
    public let limit: Int
    public private(set) var items: [Item] = []
    /// True after a drop that left no keyframe (or after ``restartAtKeyframe()``): non-key frames are dropped
    /// until a keyframe comes.
    public private(set) var awaitingKeyframe = false
    /// Frames dropped since the start.
    public private(set) var dropped = 0

    public init(limit: Int = 30) { self.limit = max(1, limit) }

    public var count: Int { items.count }
    public var isEmpty: Bool { items.isEmpty }
    /// From the oldest waiting frame's timestamp to the newest's, µs.
    public var spanMicros: UInt64 {
        guard let first = items.first, let last = items.last, last.micros > first.micros else { return 0 }
        return last.micros - first.micros
    }

    /// Queues a frame (or drops it while a keyframe is awaited), then applies the limit.
    public mutating func push(_ item: Item) -> Outcome {
        var outcome = Outcome()
        if awaitingKeyframe {
            guard item.isKeyframe else {
                dropped += 1
                outcome.dropped = 1
                return outcome
            }
            awaitingKeyframe = false
        }
        items.append(item)
        guard items.count > limit else { return outcome }
        if let newestKey = items.lastIndex(where: { $0.isKeyframe }), newestKey > 0 {
            outcome.dropped = newestKey
            items.removeFirst(newestKey)
        }
        if items.count > limit {
            // Only the frames of one keyframe's group wait, and too many: drop them all and start over at a new keyframe.
            outcome.dropped += items.count
            items.removeAll()
            awaitingKeyframe = true
            outcome.needsKeyframe = true
        }
        dropped += outcome.dropped
        return outcome
    }

    /// The oldest waiting frame, taken out.
    public mutating func pop() -> Item? { items.isEmpty ? nil : items.removeFirst() }

    /// After a new connection the first frame written must be a keyframe: drops what waits before the first
    /// waiting keyframe; with none waiting, drops all and awaits one (the caller asks the encoding for it).
    /// - Returns: whether a keyframe must be asked for.
    public mutating func restartAtKeyframe() -> Bool {
        if let first = items.firstIndex(where: { $0.isKeyframe }) {
            dropped += first
            items.removeFirst(first)
            return false
        }
        dropped += items.count
        items.removeAll()
        awaitingKeyframe = true
        return true
    }
}
