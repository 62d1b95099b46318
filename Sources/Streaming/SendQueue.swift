/// The frames waiting to be written to one destination, bounded by the seed's rule: when more than
/// ``limit`` frames wait (about a second), the stale ones go, and what stays still decodes.
///
/// ```
///  push ─▶ [K p p p K p p p p … ] ─▶ pop (the writer thread)
///          over the limit: drop everything before the newest waiting keyframe;
///          no keyframe waiting: drop all, ask for one, and drop new non-key frames until it comes
/// ```
/// A non-key frame is never sent after a gap (it would refer to a frame the server never got), so a drop
/// always ends at a keyframe. Sound waits beside the pictures, in a queue of its own:
///
/// ```
///  video  [K p p p K p p]          pop: the older head first (video on a tie); sound only once a picture at
///  audio  [a a a a a a a a a a]         or after its time was pushed: never sound ahead of the pictures
///          a drop of pictures drops the sound before the first picture kept (the delay falls for both)
/// ```
/// Sans-I/O: a value type the destination keeps under its lock; tests drive it.
public struct SendQueue<Frame: Sendable>: Sendable {
    /// One waiting frame.
    public struct Item: Sendable {
        public var frame: Frame
        public var isKeyframe: Bool
        /// Its timestamp, µs (for the queue's length in time, and the order of sound and pictures).
        public var micros: UInt64
        /// A picture (false: sound).
        public var isVideo: Bool
        public init(frame: Frame, isKeyframe: Bool, micros: UInt64, isVideo: Bool = true) {
            self.frame = frame
            self.isKeyframe = isKeyframe
            self.micros = micros
            self.isVideo = isVideo
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
    /// Sound frames waiting beyond which the oldest goes (pictures stopped coming): 500 AAC frames, 10.7 s.
    public static var audioLimit: Int { 500 }
    /// The pictures waiting, oldest first.
    public private(set) var items: [Item] = []
    /// The sound waiting, oldest first.
    public private(set) var audioItems: [Item] = []
    /// Sound frames dropped since the start (with the pictures of their time, or past ``audioLimit``).
    public private(set) var droppedAudio = 0
    /// The newest picture's time pushed so far, µs: sound up to it may go.
    private var videoMicros: UInt64?
    /// True after a drop that left no keyframe (or after ``restartAtKeyframe()``): non-key frames are dropped
    /// until a keyframe comes.
    public private(set) var awaitingKeyframe = false
    /// Frames dropped since the start.
    public private(set) var dropped = 0

    public init(limit: Int = 30) { self.limit = max(1, limit) }

    /// Pictures waiting (the limit counts these).
    public var count: Int { items.count }
    /// No picture waits.
    public var isEmpty: Bool { items.isEmpty }
    /// From the oldest waiting frame's timestamp to the newest's, µs.
    public var spanMicros: UInt64 {
        guard let first = items.first, let last = items.last, last.micros > first.micros else { return 0 }
        return last.micros - first.micros
    }

    /// Queues a picture (or drops it while a keyframe is awaited), then applies the limit; a sound frame
    /// (``Item/isVideo`` false) waits in its own queue, bounded by ``audioLimit``.
    public mutating func push(_ item: Item) -> Outcome {
        guard item.isVideo else {
            audioItems.append(item)
            if audioItems.count > Self.audioLimit {
                audioItems.removeFirst(audioItems.count - Self.audioLimit)
                droppedAudio += 1
            }
            return Outcome()
        }
        var outcome = Outcome()
        if awaitingKeyframe {
            guard item.isKeyframe else {
                dropped += 1
                outcome.dropped = 1
                return outcome
            }
            awaitingKeyframe = false
            dropAudio(before: item.micros)
        }
        videoMicros = max(videoMicros ?? 0, item.micros)
        items.append(item)
        guard items.count > limit else { return outcome }
        if let newestKey = items.lastIndex(where: { $0.isKeyframe }), newestKey > 0 {
            outcome.dropped = newestKey
            items.removeFirst(newestKey)
            dropAudio(before: items[0].micros)
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

    /// The oldest waiting frame, taken out: the older of the two heads (the picture on a tie), sound only when
    /// a picture at or after its time has been pushed. With `draining` (a file's last writes), sound after the
    /// last picture goes too.
    public mutating func pop(draining: Bool = false) -> Item? {
        if let audio = audioItems.first, !awaitingKeyframe, draining || audio.micros <= (videoMicros ?? 0),
           items.first.map({ audio.micros < $0.micros }) ?? true {
            return audioItems.removeFirst()
        }
        return items.isEmpty ? nil : items.removeFirst()
    }

    private mutating func dropAudio(before micros: UInt64) {
        let stale = audioItems.prefix { $0.micros < micros }.count
        audioItems.removeFirst(stale)
        droppedAudio += stale
    }

    /// After a new connection the first frame written must be a keyframe: drops what waits before the first
    /// waiting keyframe; with none waiting, drops all and awaits one (the caller asks the encoding for it).
    /// - Returns: whether a keyframe must be asked for.
    /// Sound older than the keyframe goes too (the stream starts with the picture).
    public mutating func restartAtKeyframe() -> Bool {
        if let first = items.firstIndex(where: { $0.isKeyframe }) {
            dropped += first
            items.removeFirst(first)
            dropAudio(before: items[0].micros)
            return false
        }
        dropped += items.count
        items.removeAll()
        droppedAudio += audioItems.count
        audioItems.removeAll()
        awaitingKeyframe = true
        return true
    }

    /// Counts sound frames the owner dropped itself (before the first picture of a connection).
    public mutating func countDroppedAudio(_ n: Int) { droppedAudio += n }
}
