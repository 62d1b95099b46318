import Dispatch
import PeerConnection
import RTPSession
import Media
public import ScreencastSupport
import Synchronization
public import VideoSource

/// What the hub needs of a running second encoding (``VideoSource/SecondEncoding`` has it).
public protocol SecondEncoderControl: AnyObject, Sendable {
    /// Asks it for a keyframe (coalesced and spaced by it).
    func requestKeyframe()
    /// Its target, kbps.
    func setBitrate(kbps: Int)
    /// Width and height divided by `divisor` from the next picture on.
    func setDivisor(_ divisor: Int)
    /// Ends it; returns when its thread has ended.
    func stop()
    /// Its encoder's figures for `/stats`: size, fps, kbps, frames, keyframes.
    var json: JSONValue { get }
}

/// Starts a second encoding at `kbps` (pictures divided by `divisor`) whose frames go to `sink`; nil when it
/// cannot (the outliers then stay on the main encoding, thinned as before). Called on the hub's own serial queue.
public typealias SecondEncoderFactory = @Sendable (_ kbps: Int, _ divisor: Int, _ sink: any VideoSink) -> (any SecondEncoderControl)?

extension SecondEncoding: SecondEncoderControl {
    public var json: JSONValue {
        let s = stats
        return .object([
            ("width", .number(s.width)), ("height", .number(s.height)), ("fps", .double((s.fps * 100).rounded() / 100)),
            ("kbps", .double((s.kbps * 10).rounded() / 10)), ("targetKbps", .number(s.bitrateKbps)), ("fpsCap", .double(s.fpsCap)),
            ("frames", .number(s.encoded)), ("keyframes", .number(s.keyframes)),
            ("encodeMsP50", .double((s.encodeMillisP50 * 100).rounded() / 100)),
        ])
    }
}

/// The running second encoder and the serial queue that starts, drives and stops it: a start makes a thread
/// and a stop waits for one, so neither may run on a peer's queue, an encoder thread or under the hub's lock.
final class SecondEncoderSlot: Sendable {
    let queue = DispatchQueue(label: "screencast.viewers.second-encoder")
    let control = Mutex<(any SecondEncoderControl)?>(nil)

    /// Runs `body` with the running encoder (nil: none), in order with every other operation.
    func async(_ body: @escaping @Sendable ((any SecondEncoderControl)?) -> Void) {
        queue.async { [self] in body(control.withLock { $0 }) }
    }

    /// Stops and forgets the running encoder, waiting for it (never call on `queue`).
    func stopNow() {
        queue.sync {
            let running = control.withLock { $0.take() }
            running?.stop()
        }
    }
}

/// The sink a second encoding delivers to: the hub's ``ViewerHub/deliver(_:from:)`` for `.low` (held weakly:
/// the encoding must not keep the hub alive).
final class SecondEncodingInlet: VideoSink, Sendable {
    private struct Reference: Sendable { weak var hub: ViewerHub? }
    private let reference = Mutex(Reference())

    /// Points it at `hub` (once the hub exists).
    func attach(_ hub: ViewerHub) { reference.withLock { $0.hub = hub } }

    func consume(_ frame: EncodedFrame) { reference.withLock { $0.hub }?.deliver(frame, from: .low) }
    func finish() {}
}

/// Asks the hub's second encoding for keyframes (for an ``EncryptingSink`` in front of it, which asks after a
/// frame it could not encrypt and on a key rotation); bitrate and cadence requests do not apply to it.
final class SecondEncodingKeyframes: SharedEncoderControl {
    private let slot: SecondEncoderSlot

    init(slot: SecondEncoderSlot) { self.slot = slot }

    func requestKeyframe() { slot.async { $0?.requestKeyframe() } }
    func setBitrate(kbps: Int?) {}
    func setDroppableCadence(period: Int?) {}
}

extension ViewerHub {
    /// Where the second encoding's frames go when encrypted: put an ``EncryptingSink`` whose sink is this in
    /// front of it (the factory is given this sink).
    public var secondEncodingSink: any VideoSink { secondInlet }

    /// Keyframe requests of the second encoding, for an ``EncryptingSink`` in front of it.
    public var secondEncodingKeyframes: any SharedEncoderControl { SecondEncodingKeyframes(slot: second) }

    /// The `secondEncoding` part of `/stats`.
    func secondEncodingJSON(_ s: StateMachine) -> JSONValue {
        let running: (kbps: Int, divisor: Int)? = if case .running(let kbps, let divisor) = s.encodings.encoder { (kbps, divisor) } else { nil }
        return .object([
            ("enabled", .bool(secondEncoderFactory != nil)),
            ("state", .string(running == nil ? "off" : "running")),
            ("targetKbps", running.map { .number($0.kbps) } ?? .null),
            ("divisor", running.map { .number($0.divisor) } ?? .null),
            ("viewers", .array(s.encodings.lowViewers.sorted().map { .string($0) })),
            ("starts", .number(s.encodings.starts)),
            ("moves", .number(s.encodings.moves)),
            ("encoder", second.control.withLock { $0 }?.json ?? .null),
        ])
    }
}
