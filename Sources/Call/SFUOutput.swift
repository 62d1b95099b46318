import DTLS
public import ICE
public import Media
import PeerConnection
public import Publishing
public import ScreencastSupport
import Synchronization
public import VideoSource

/// The SFU leg (WHIP or a Janus VideoRoom, ``SFUPublisher``): one more consumer of the shared encoding, which
/// reconnects on a schedule of its own; local viewers are untouched while it fails or is slow. Its REMB cap and
/// congestion target bound the shared encoder through ``OutputContext/reportBitrate``, as a viewer's do.
public final class SFUOutput: CallOutput, VideoSink {
    public let name = "sfu"
    public let consumes = MediaSelection.videoVP8
    public let protection = FrameProtection.endToEnd
    /// The leg (its state and counters).
    public let publisher: SFUPublisher
    /// Whether ``start()`` ran: the publisher's stop waits for a thread that only start makes.
    private let started = Atomic<Bool>(false)

    /// - Parameters:
    ///   - ice: the viewers' ICE settings (the leg takes the controlling role).
    ///   - consentTimeoutSeconds: the SFU not heard this long gets nothing more (RFC 7675), seconds.
    ///   - context: from ``Call/context(for:consumer:)`` (keyframes, the rate reports).
    ///   - logger: the leg's logger (`sfu`).
    /// - Throws: ``CallError/certificate(_:)`` when our DTLS certificate cannot be made.
    public init(
        transport: any SFUTransport, ice: ICEAgent.Configuration, consentTimeoutSeconds: Int, context: OutputContext, logger: Logger
    ) throws(CallError) {
        var ice = ice
        ice.role = .controlling
        let certificate: DTLSCertificate
        do { certificate = try DTLSCertificate.shared() } catch { throw .certificate(error) }
        var configuration = PeerConnection.Configuration(ice: ice, certificate: certificate)
        configuration.offersTransportWideCC = true
        configuration.consentLimitMicros = UInt64(consentTimeoutSeconds) * 1_000_000
        publisher = SFUPublisher(
            transport: transport, configuration: configuration, logger: logger,
            hooks: .init(
                requestKeyframe: context.requestKeyframe,
                bitrateCeiling: { context.reportBitrate($0, .remb) },
                targetBitrate: { context.reportBitrate($0, .congestionControl) },
                feedbackHeard: context.reportHeard))
    }

    public var inlet: OutputInlet { .video(self) }

    /// Starts publishing on the leg's own thread; returns at once.
    public func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        publisher.start()
    }

    /// Ends the leg (WHIP DELETE / Janus unpublish) and waits for its thread; nothing when it never started.
    public func stop() {
        guard started.load(ordering: .acquiring) else { return }
        publisher.stop()
    }

    public func consume(_ frame: EncodedFrame) { publisher.consume(frame) }

    /// The encoding ended: the leg ends.
    public func finish() { stop() }

    /// The leg's state and reconnects for the stats line (`published/0`).
    var summary: String { "\(publisher.stats.state.rawValue)/\(publisher.stats.reconnects)" }

    public var stats: (key: String, value: JSONValue)? { ("sfu", Self.json(publisher)) }

    /// `/stats` "sfu": the leg's state, server, RTT, loss, NACKs, PLIs, bitrate cap, reconnects, last reason, ICE
    /// restarts (begun, and those that brought the leg back without a new session), and
    /// with TWCC the congestion target (bits per second), feedback count and congestion view.
    static func json(_ publisher: SFUPublisher) -> JSONValue {
        let stats = publisher.stats
        var fields: [(String, JSONValue)] = [
            ("state", .string(stats.state.rawValue)), ("server", .string(stats.server)),
            ("reconnects", .number(stats.reconnects)), ("lastReason", stats.lastReason.map { .string($0) } ?? .null),
            ("iceRestarts", .number(stats.iceRestarts)), ("iceRestartsSucceeded", .number(stats.iceRestartsSucceeded)),
            ("rttMs", stats.roundTripMillis.map { .double(($0 * 10).rounded() / 10) } ?? .null),
            ("fractionLost", stats.fractionLost.map { .double($0) } ?? .null),
        ]
        fields += [
            ("nacksReceived", .number(stats.nacksReceived)), ("packetsRetransmitted", .number(stats.packetsRetransmitted)),
            ("plisReceived", .number(stats.plisReceived)), ("firsReceived", .number(stats.firsReceived)),
            ("bitrateCeilingBps", stats.bitrateCeiling.map { .number($0) } ?? .null), ("framesSent", .number(stats.framesSent)),
        ]
        fields += [
            ("targetBps", stats.targetBitrate.map { .number($0) } ?? .null), ("twccFeedbackPackets", .number(stats.transportFeedbackPackets)),
            ("congestion", stats.congestion),
        ]
        return .object(fields)
    }
}
