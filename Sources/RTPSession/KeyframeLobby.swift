/// Holds a new receiver back until a keyframe: an interframe is useless to a decoder that has not seen the
/// keyframe it refers to (RFC 6386 §9.1), and a browser answers such frames with PLIs and a frozen picture.
///
/// ```
///            enter(now) ─▶ waiting ──(keyframe)──▶ open ──(reset: the pacer overflowed)──▶ waiting
///                            │ ▲
///     keyframeRequestDue ────┘ └── markRequested(now): asked again every `retryIntervalMicros`
/// ```
///
/// Sans-I/O: the owner says what arrived and when; the lobby says whether to forward it and when to ask
/// the shared encoder for a keyframe (the encoder coalesces requests, so asking again is cheap).
public struct KeyframeLobby: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Not admitting anything yet (before ``enter(nowMicros:)``).
        case closed
        /// Dropping frames until a keyframe; the last keyframe request was made at `lastRequestMicros`.
        case waiting(sinceMicros: UInt64, lastRequestMicros: UInt64)
        /// Forwarding every frame.
        case open
    }

    public private(set) var state: State = .closed
    /// How long to wait for the requested keyframe before asking again.
    public let retryIntervalMicros: UInt64
    /// Frames dropped while waiting.
    public private(set) var framesDropped = 0
    /// From the last ``enter(nowMicros:)`` or ``reset(nowMicros:)`` to the keyframe that opened the lobby.
    public private(set) var lastWaitMicros: UInt64?

    public init(retryIntervalMicros: UInt64 = 1_000_000) {
        self.retryIntervalMicros = max(1, retryIntervalMicros)
    }

    /// The receiver is ready for media: start waiting for a keyframe. Returns true: ask for one now.
    @discardableResult
    public mutating func enter(nowMicros now: UInt64) -> Bool {
        state = .waiting(sinceMicros: now, lastRequestMicros: now)
        return true
    }

    /// The receiver lost its place (frames were dropped before it): wait for a keyframe again. Returns true
    /// when a request should go out now (false when already waiting).
    @discardableResult
    public mutating func reset(nowMicros now: UInt64) -> Bool {
        if case .waiting = state { return false }
        return enter(nowMicros: now)
    }

    /// Whether to forward a frame. A keyframe opens the lobby; anything before it is dropped.
    public mutating func admit(isKeyframe: Bool, nowMicros now: UInt64) -> Bool {
        switch state {
        case .open: return true
        case .closed:
            framesDropped += 1
            return false
        case .waiting(let since, _):
            guard isKeyframe else {
                framesDropped += 1
                return false
            }
            state = .open
            lastWaitMicros = now >= since ? now - since : 0
            return true
        }
    }

    /// When the next keyframe request is due (nil unless waiting).
    public var nextRequestMicros: UInt64? {
        if case .waiting(_, let last) = state { return last &+ retryIntervalMicros }
        return nil
    }

    /// True when waiting and the last request is `retryIntervalMicros` old.
    public func keyframeRequestDue(nowMicros now: UInt64) -> Bool {
        guard let next = nextRequestMicros else { return false }
        return now >= next
    }

    /// Records that a keyframe was requested at `now`.
    public mutating func markRequested(nowMicros now: UInt64) {
        if case .waiting(let since, _) = state { state = .waiting(sinceMicros: since, lastRequestMicros: now) }
    }

    /// True once a keyframe went through.
    public var isOpen: Bool { state == .open }

    /// `closed`, `waiting` or `open`, for stats.
    public var stateName: String {
        switch state {
        case .closed: "closed"
        case .waiting: "waiting"
        case .open: "open"
        }
    }
}
