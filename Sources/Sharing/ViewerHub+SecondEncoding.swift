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
    /// What the policy decided under the lock, applied outside it (``applyEncodings(_:peer:)``).
    struct EncodingWork {
        var actions: [SecondEncodingPolicy.Action] = []
        /// Encodings a moving viewer needs a keyframe of.
        var keyframes: Set<EncodingChoice> = []
        /// The main encoder's rate, when the viewers it serves changed.
        var decision: BitrateFollower.Decision?
    }

    /// Where the second encoding's frames go when encrypted: put an ``EncryptingSink`` whose sink is this in
    /// front of it (the factory is given this sink).
    public var secondEncodingSink: any VideoSink { secondInlet }

    /// Keyframe requests of the second encoding, for an ``EncryptingSink`` in front of it.
    public var secondEncodingKeyframes: any SharedEncoderControl { SecondEncodingKeyframes(slot: second) }

    /// One encoded frame of `encoding`, handed to the viewers whose ``EncodingSwitch`` lets it through (each
    /// packetizes it with its own SSRC, sequence numbers and picture IDs, RFC 7741); the bytes are shared.
    func deliver(_ frame: EncodedFrame, from encoding: EncodingChoice) {
        var completed: [(String, EncodingChoice)] = []
        let targets = state.withLock { s -> [(PeerConnection, UInt64)] in
            if encoding == .main { s.lastFrameSize = (frame.width, frame.height) }
            guard !s.peers.isEmpty else { return [] }
            var targets: [(PeerConnection, UInt64)] = []
            targets.reserveCapacity(s.peers.count)
            for (id, peer) in s.peers {
                let verdict = s.switches[id, default: EncodingSwitch(retryMicros: configuration.keyframeRetryMicros)]
                    .frame(from: encoding, isKeyframe: frame.isKeyframe, captureMicros: frame.captureTimestampMicros)
                guard case .send(let capture, let completes) = verdict else { continue }
                targets.append((peer, capture))
                if completes { completed.append((id, encoding)) }
            }
            return targets
        }
        for (peer, capture) in targets {
            peer.send(OutgoingVideoFrame(bytes: frame.bytes, isKeyframe: frame.isKeyframe, captureMicros: capture, isDroppable: frame.isDroppable))
        }
        for (id, encoding) in completed {
            logger.info("viewer switched encoding at its keyframe", ["peer": id, "encoding": encoding.rawValue, "size": "\(frame.width)x\(frame.height)"])
        }
    }

    /// Asks the policy what the estimates want now (under the state lock, so decisions made on different
    /// queues keep their order), starts the moves it decides and tells the follower who the main encoder serves.
    func updateEncodings(_ s: inout State, _ now: UInt64) -> EncodingWork {
        guard secondEncoderFactory != nil, !s.finished else { return EncodingWork() }
        let size = s.lastFrameSize.map { PictureSize(width: $0.width, height: $0.height) }
        var work = EncodingWork()
        work.actions = s.encodings.update(
            estimates: s.follower.peerEstimates, movable: Set(s.watching.keys), pictureSize: size, ceilingKbps: ceiling(s), nowMicros: now)
        for case .move(let peer, let to, _, _, _) in work.actions
        where s.switches[peer, default: EncodingSwitch(retryMicros: configuration.keyframeRetryMicros)].moveTo(to, nowMicros: now) {
            work.keyframes.insert(to)
        }
        work.decision = s.follower.setServedElsewhere(s.encodings.lowViewers, ceilingKbps: ceiling(s))
        return work
    }

    /// Applies what ``updateEncodings(_:_:)`` decided, in order, and logs it.
    func applyEncodings(_ work: EncodingWork, peer: String) {
        apply(work.decision, peer: peer)
        for action in work.actions {
            switch action {
            case .start(let kbps, let divisor):
                let (factory, inlet, logger) = (secondEncoderFactory, secondInlet, logger)
                second.queue.async { [second] in
                    guard let factory else { return }
                    let started = factory(kbps, divisor, inlet)
                    second.control.withLock { $0 = started }
                    if started != nil {
                        logger.info("second encoder started", ["kbps": kbps, "divisor": divisor, "peer": peer])
                    } else {
                        logger.warning("second encoder could not start: slow viewers stay on the main encoding", ["kbps": kbps])
                    }
                }
            case .stop:
                let logger = logger
                second.queue.async { [second] in
                    let running = second.control.withLock { $0.take() }
                    running?.stop()
                    logger.info("second encoder stopped: no viewer far below the others", [:])
                }
            case .setBitrate(let kbps):
                logger.debug("second encoder bitrate", ["kbps": kbps])
                second.async { $0?.setBitrate(kbps: kbps) }
            case .setDivisor(let divisor):
                logger.info("second encoder size divisor", ["divisor": divisor])
                second.async { $0?.setDivisor(divisor) }
            case .move(let id, let to, let reason, let kbps, let highest):
                logger.info(to == .low ? "viewer moves to the low encoding" : "viewer moves back to the main encoding", [
                    "peer": id, "reason": reason, "kbps": kbps, "highest.kbps": highest,
                ])
            }
        }
        for encoding in work.keyframes { requestKeyframe(of: encoding) }
    }

    /// A keyframe of `encoding`.
    func requestKeyframe(of encoding: EncodingChoice) {
        switch encoding {
        case .main: encoder.requestKeyframe()
        case .low: second.async { $0?.requestKeyframe() }
        }
    }

    /// Moves waiting for their keyframe longer than the retry interval ask again (the feedback timer).
    func retryMoveKeyframes(_ s: inout State, _ now: UInt64) -> Set<EncodingChoice> {
        var due: Set<EncodingChoice> = []
        for id in s.switches.keys {
            if let encoding = s.switches[id]?.keyframeRetryDue(nowMicros: now) { due.insert(encoding) }
        }
        return due
    }

    /// The `secondEncoding` part of `/stats`.
    func secondEncodingJSON(_ s: State) -> JSONValue {
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
