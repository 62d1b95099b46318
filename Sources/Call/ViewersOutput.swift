public import AudioSource
import RTPSession
import Media
public import ScreencastSupport
public import Sharing
import Synchronization
import VideoSource

/// The WHEP viewers (``ViewerHub``): every viewer's peer connection on the shared encoding, and, for viewers far
/// below the others, a second lower-rate encoding of the same pictures that the hub starts while one is needed
/// (issue 12), encrypted like the main one. The hub also keeps the rate policy across every consumer of the
/// encoding (viewers and the other outputs' reports, ``OutputContext/reportBitrate``).
public final class ViewersOutput: CallOutput {
    public let name = "viewers"
    public let consumes = MediaSelection.videoVP8
    public let protection = FrameProtection.endToEnd
    /// The viewers: the HTTP server's WHEP sessions, and the rate policy.
    public let hub: ViewerHub
    /// The sink that encrypts the second encoding's frames (nil without end-to-end encryption).
    private let secondEncryption: EncryptingSink?
    /// Where the Opus packets go: the hub, behind an ``EncryptingAudioSink`` with end-to-end encryption.
    private let audioSink: (any EncodedAudioSink)?

    /// - Parameters:
    ///   - secondEncoding: start a second encoding for viewers far below the others (`--second-encoding`).
    ///   - rotation: with end-to-end encryption, makes the second encoding's encrypting sink and the sound's
    ///     (rotated with the main one).
    ///   - logger: the call's logger (the hub logs as `viewers`, the second encoder as `second-encoder`).
    init(
        sharing: SharingConfiguration, source: VideoSource, secondEncoding: Bool, rotation: KeyRotation?, logger: Logger
    ) throws(CallError) {
        // The factory runs after the hub exists; the second encoding's encryption is made after the hub too
        // (it encrypts for the hub's second-encoding inlet), so the factory reads it from this slot.
        let protectedInlet = SecondEncodingSinkSlot()
        var factory: SecondEncoderFactory?
        if secondEncoding {
            let secondLogger = logger.named("second-encoder")
            factory = { kbps, divisor, sink in
                let encoding = SecondEncoding(source: source, bitrateKbps: kbps, divisor: divisor, logger: secondLogger)
                encoding.addSink(protectedInlet.sink ?? sink)
                encoding.start()
                return encoding
            }
        }
        do {
            hub = try ViewerHub(configuration: sharing, encoder: source, secondEncoder: factory, logger: logger.named("viewers"))
        } catch {
            throw .certificate(error)
        }
        secondEncryption = try rotation?.makeSink(
            for: [hub.secondEncodingSink], encoder: hub.secondEncodingKeyframes, logger: logger.named("e2ee-second"))
        protectedInlet.set(secondEncryption)
        if sharing.sendsAudio {
            let inlet = ViewersAudioInlet(hub: hub)
            audioSink = try rotation?.makeAudioSink(for: inlet, logger: logger.named("e2ee-audio")) ?? inlet
        } else {
            audioSink = nil
        }
    }

    public var inlet: OutputInlet { .video(hub) }

    /// The sound in Opus (one encoding for every viewer) when viewers get sound.
    public var consumesAudio: MediaSelection? { audioSink == nil ? nil : .audioOpus }

    /// Each Opus packet to every viewer whose answer accepted audio (``ViewerHub/sendAudio(_:)``), encrypted
    /// once for all of them with end-to-end encryption (``EncryptingAudioSink``).
    public var audioInlet: (any EncodedAudioSink)? { audioSink }

    /// Viewers arrive through the HTTP server's WHEP sessions: nothing to start.
    public func start() {}

    /// Closes every viewer ("the call is stopping"); new sessions are refused from now on.
    public func stop() { hub.closeAll(reason: "the call is stopping") }

    public var stats: (key: String, value: JSONValue)? { ("viewers", hub.json) }
}

/// Where the second encoding's frames go when they are encrypted: set once, right after the hub is made and
/// before any second encoding can start (the hub starts one only for a connected viewer).
private final class SecondEncodingSinkSlot: Sendable {
    private let slot = Mutex<(any VideoSink)?>(nil)

    var sink: (any VideoSink)? { slot.withLock { $0 } }

    func set(_ sink: (any VideoSink)?) { slot.withLock { $0 = sink } }
}

/// The viewers' audio inlet: Opus packets from the call's Opus encoding to the hub, as RTP sender frames (the
/// bytes shared, not copied).
private final class ViewersAudioInlet: EncodedAudioSink {
    let hub: ViewerHub

    init(hub: ViewerHub) { self.hub = hub }

    func consume(_ frame: EncodedAudioFrame) {
        hub.sendAudio(OutgoingAudioFrame(
            bytes: frame.data, sampleTime: frame.sampleTime, captureMicros: frame.captureMicros, isSilence: frame.isSilence))
    }

    /// The encoding ended; the viewers end with the call (``ViewersOutput/stop()``).
    func finish() {}
}
