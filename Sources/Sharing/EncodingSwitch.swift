/// One viewer's gate between the call's two encodings (sans-I/O): which frames it is sent, so that moving
/// from one encoding to the other needs no renegotiation. The viewer's own RTP stream (one SSRC, its
/// sequence numbers, picture IDs and RTP timestamps, its NACK history) is made after this gate, so those
/// simply continue across a move; what the gate guarantees is the rest:
///
/// ```
///   on(A) ──moveTo(B)──▶ moving(A → B): A's frames still sent, B's dropped   ──B's keyframe──▶ on(B)
///                          │ keyframe asked of B now, again every retryMicros until it comes
///                          └─moveTo(A): the move is called off, still on(A)
/// ```
/// - The first frame sent from the new encoding is its keyframe (a decoder cannot start elsewhere; the
///   resolution may change there too): make-before-break, the viewer sees no gap while it waits.
/// - Capture times never go back or repeat: a frame at or before the last one sent is sent
///   ``minimumStepMicros`` after it (the two encoders take the same pictures, but not at the same moment).
/// - Keyframe requests from the viewer (PLI, FIR, its lobby) go to ``keyframeSource``: the encoding it is
///   moving to, else the one it is on.
public struct EncodingSwitch: Sendable, Equatable {
    /// The least step between two capture times sent, µs (> one 90 kHz tick, as ``VideoSource``'s encoder keeps).
    public static let minimumStepMicros: UInt64 = 12
    /// How long a move waits for the keyframe it asked for before asking again, µs.
    public let retryMicros: UInt64
    /// The encoding whose frames are sent.
    public private(set) var current: EncodingChoice = .main
    /// The encoding it moves to at that one's next keyframe (nil: not moving).
    public private(set) var target: EncodingChoice?
    /// Moves completed.
    public private(set) var moves = 0
    private var lastCaptureMicros: UInt64?
    private var requestedMicros: UInt64 = 0

    public init(retryMicros: UInt64 = 1_000_000) {
        self.retryMicros = retryMicros
    }

    /// What to do with one frame.
    public enum Verdict: Sendable, Equatable {
        /// Send it with this capture time (µs); `completesMove`: it is the keyframe that completed a move.
        case send(captureMicros: UInt64, completesMove: Bool)
        case drop
    }

    /// Starts a move to `encoding` at `nowMicros`. Returns true when a keyframe must be asked of it now.
    public mutating func moveTo(_ encoding: EncodingChoice, nowMicros now: UInt64) -> Bool {
        if encoding == current {
            target = nil
            return false
        }
        guard target != encoding else { return false }
        target = encoding
        requestedMicros = now
        return true
    }

    /// A frame of `encoding`: whether it is sent, and with what capture time.
    public mutating func frame(from encoding: EncodingChoice, isKeyframe: Bool, captureMicros: UInt64) -> Verdict {
        var completes = false
        if encoding == target, isKeyframe {
            current = encoding
            target = nil
            moves += 1
            completes = true
        }
        guard encoding == current else { return .drop }
        var capture = captureMicros
        if let last = lastCaptureMicros, capture < last &+ Self.minimumStepMicros { capture = last &+ Self.minimumStepMicros }
        lastCaptureMicros = capture
        return .send(captureMicros: capture, completesMove: completes)
    }

    /// The encoding to ask for a keyframe again at `nowMicros` (a move waiting ``retryMicros`` for it), if any.
    public mutating func keyframeRetryDue(nowMicros now: UInt64) -> EncodingChoice? {
        guard let target, now >= requestedMicros &+ retryMicros else { return nil }
        requestedMicros = now
        return target
    }

    /// Where the viewer's keyframe requests go.
    public var keyframeSource: EncodingChoice { target ?? current }

    /// `main`, `low`, or `main->low` while moving, for `/stats`.
    public var description: String { target.map { "\(current)->\($0)" } ?? current.rawValue }
}
