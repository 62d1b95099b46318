import Dispatch
import Foundation
public import Media
public import PeerConnection
import RTPSession
public import ScreencastSupport
import Synchronization

/// The SFU leg: one more consumer (``VideoSink``) of the shared source's encoded frames, publishing them
/// through an ``SFUTransport`` (WHIP or Janus) with an offering ``PeerConnection``, and staying published
/// (``ReconnectSchedule``: at once, 2 s, 5 s, 10 s, then every 10 s; each attempt logged with its reason).
///
/// ```
///   encoder thread ── consume(frame) ──▶ peer.send (posts to the peer's own queue: never blocks, never
///                                        shared with local viewers, dropped while not connected)
///   publisher thread: offerer (gather) ─▶ transport.open(offer) ─▶ connect(answer) ─▶ wait for the end
///                     ─▶ transport.close (DELETE) ─▶ peer.close ─▶ schedule's delay ─▶ again
/// ```
///
/// The first frame after every (re)connect is a keyframe: the sender chain's lobby holds frames until
/// one and asks for it (``Hooks/requestKeyframe``); PLIs (never FIR from Janus) ask again, NACKs are
/// answered from the chain's history, REMB reaches ``Hooks/bitrateCeiling``; with transport-wide CC (offered;
/// Janus keeps it and sends TWCC feedback) our congestion controller's target for the leg, REMB its ceiling,
/// reaches ``Hooks/targetBitrate``.
public final class SFUPublisher: VideoSink, @unchecked Sendable {
    // @unchecked Sendable: every mutable field is inside `state` (a Mutex); the rest is immutable.

    /// What the publisher asks of the call.
    public struct Hooks: Sendable {
        public var requestKeyframe: @Sendable () -> Void
        /// The SFU's REMB estimate, bits per second (Janus: the room's cap): a ceiling for the encoder.
        public var bitrateCeiling: @Sendable (UInt64) -> Void
        /// The leg's send-side congestion target from the SFU's TWCC feedback, bits per second; nil when the
        /// leg ended (its target no longer holds). Only the current peer's targets come here: a peer already
        /// replaced (closing on its own queue) can still compute one, and it is dropped.
        public var targetBitrate: @Sendable (UInt64?) -> Void
        /// RTCP came from the SFU on the current leg since the last call (checked every
        /// ``SFUPublisher/feedbackCheckIntervalMillis``): the leg is heard. A leg whose feedback stopped
        /// (the SFU died, the path is cut) keeps lowering its congestion target on timers; its owner stops
        /// counting that target once nothing was heard for a while (`BitrateFollower`'s silence limit), so
        /// a dying leg cannot drag the shared encoder down for the local viewers.
        public var feedbackHeard: @Sendable () -> Void
        public init(
            requestKeyframe: @escaping @Sendable () -> Void, bitrateCeiling: @escaping @Sendable (UInt64) -> Void = { _ in },
            targetBitrate: @escaping @Sendable (UInt64?) -> Void = { _ in }, feedbackHeard: @escaping @Sendable () -> Void = {}
        ) {
            self.requestKeyframe = requestKeyframe
            self.bitrateCeiling = bitrateCeiling
            self.targetBitrate = targetBitrate
            self.feedbackHeard = feedbackHeard
        }
    }

    /// The leg's state for `/stats` and the 5 s line.
    public enum LegState: String, Sendable {
        case starting, connecting, published
        /// ICE failed; restarting it on the same session (RFC 9725 §4.3.3): frames wait for the new path.
        case restartingICE = "restarting-ice"
        case reconnecting, failed, stopped
    }

    /// What `/stats` shows of the SFU leg.
    public struct Stats: Sendable {
        public var state: LegState
        public var server: String
        public var reconnects: Int
        public var lastReason: String?
        /// ICE restarts begun (PATCH sent) and those that brought the leg back without a new session.
        public var iceRestarts: Int
        public var iceRestartsSucceeded: Int
        public var roundTripMillis: Double?
        public var fractionLost: Double?
        public var nacksReceived: Int
        public var packetsRetransmitted: Int
        public var plisReceived: Int
        public var firsReceived: Int
        public var bitrateCeiling: UInt64?
        public var framesSent: Int
        /// The congestion controller's target for the leg, bits per second (nil without TWCC feedback).
        public var targetBitrate: UInt64?
        /// TWCC feedback packets from the SFU on the current leg.
        public var transportFeedbackPackets: Int
        /// The leg's congestion view (`RTPSenderChain.Report.congestionJSON`; null without TWCC).
        public var congestion: JSONValue
    }

    private struct State {
        var leg = LegState.starting
        var peer: PeerConnection?
        /// The id of the leg's current peer (`sfu-<attempt>`), set before it is created: events of any other
        /// peer (an earlier leg still closing) are stale.
        var currentPeerID: String?
        var stopping = false
        var schedule = ReconnectSchedule()
        var lastReason: String?
        var ceiling: UInt64?
        var attempt = 0
        /// ICE servers the last WHIP session offered (RFC 9725 §4.6), used from the next attempt on.
        var offeredICEServers: WHIPICEServers?
        /// The current session's ICE recovery, and whether the peer reported ICE failed since last looked.
        var recovery = LegRecovery(supportsRestart: true)
        var iceFailedPending = false
        var iceRestarts = 0
        var iceRestartsSucceeded = 0
    }

    private let transport: any SFUTransport
    private let configuration: PeerConnection.Configuration
    private let logger: Logger
    private let hooks: Hooks
    private let state = Mutex(State())
    /// Wakes the publisher thread: the peer ended, or stop.
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    /// How often the publisher thread looks at the leg (ICE state, RTCP heard), ms.
    public static let feedbackCheckIntervalMillis = 200

    public init(transport: any SFUTransport, configuration: PeerConnection.Configuration, logger: Logger, hooks: Hooks) {
        self.transport = transport
        self.configuration = configuration
        self.logger = logger
        self.hooks = hooks
    }

    /// Starts publishing on a thread of its own; returns at once.
    public func start() {
        let thread = Thread { [self] in
            run()
            done.signal()
        }
        thread.name = "screencast.sfu"
        thread.start()
    }

    /// Ends the leg: closes the peer (DTLS close_notify), ends the session (WHIP DELETE / Janus
    /// unpublish, leave, destroy), and waits for the thread. Idempotent.
    public func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopping = true }
            return !s.stopping
        }
        guard first else { return }
        // A POST, PATCH or Janus exchange in flight ends now instead of at its timeout (up to 10 s; a break-it
        // trial saw SIGTERM wait 8 s); the DELETE that ends the session comes after, and runs.
        transport.cancelInFlight()
        wake.signal()
        done.wait()
    }

    public var stats: Stats {
        let (s, peer) = state.withLock { ($0, $0.peer) }
        let snapshot = peer?.snapshot()
        let report = snapshot?.sender
        return Stats(
            state: s.leg, server: transport.server, reconnects: max(0, s.schedule.reconnects - 1), lastReason: s.lastReason,
            iceRestarts: s.iceRestarts, iceRestartsSucceeded: s.iceRestartsSucceeded,
            roundTripMillis: report?.reports.link.roundTripMillis, fractionLost: report?.reports.link.fractionLost,
            nacksReceived: report?.nack.nacksReceived ?? 0, packetsRetransmitted: report?.nack.packetsRetransmitted ?? 0,
            plisReceived: report?.keyframes.plisReceived ?? 0, firsReceived: report?.keyframes.firsReceived ?? 0,
            bitrateCeiling: s.ceiling, framesSent: report?.stream.framesSent ?? 0,
            targetBitrate: report?.congestion.map { UInt64($0.targetBitsPerSecond) }, transportFeedbackPackets: report?.congestion?.feedbackPackets ?? 0,
            congestion: report?.congestionJSON ?? .null)
    }

    // MARK: VideoSink

    public func consume(_ frame: EncodedFrame) {
        // While ICE restarts the peer's gate holds frames and lets the keyframe through first.
        guard let peer = state.withLock({ $0.leg == .published || $0.leg == .restartingICE ? $0.peer : nil }) else { return }
        peer.send(OutgoingVideoFrame(
            bytes: frame.bytes, isKeyframe: frame.isKeyframe, captureMicros: frame.captureTimestampMicros, isDroppable: frame.isDroppable))
    }

    public func finish() { stop() }

    // MARK: The publisher thread

    private var stopping: Bool { state.withLock { $0.stopping } }

    private func run() {
        while !stopping {
            let (delay, attempt) = state.withLock { s in
                s.attempt += 1
                return (s.schedule.nextDelayMillis(), s.attempt)
            }
            if delay > 0 {
                logger.info("sfu reconnect scheduled", ["in.ms": delay, "attempt": attempt, "reason": state.withLock { $0.lastReason } ?? "-"])
                _ = wake.wait(timeout: .now() + .milliseconds(Int(delay)))
                if stopping { break }
            }
            do throws(PublishingError) {
                try publishOnce(attempt: attempt)
            } catch {
                state.withLock { s in
                    s.lastReason = error.description
                    s.leg = error.isRetryable ? .reconnecting : .failed
                }
                logger.warning("sfu attempt failed", ["attempt": attempt, "server": transport.server, "reason": error, "retry": error.isRetryable])
                if !error.isRetryable { break }
            }
        }
        state.withLock { s in
            if s.leg != .failed { s.leg = .stopped }
        }
    }

    /// One session: offer, answer, connect, wait for its end, close it.
    private func publishOnce(attempt: Int) throws(PublishingError) {
        state.withLock { $0.leg = .connecting }
        var configuration = self.configuration
        if let offered = state.withLock({ $0.offeredICEServers }) {
            if configuration.ice.stunServer == nil { configuration.ice.stunServer = offered.stun.first }
            configuration.ice.turnServers += offered.turn.filter { !configuration.ice.turnServers.contains($0) }
        }
        let offerer: PeerConnection.Offerer
        do { offerer = try PeerConnection.Offerer(configuration: configuration, logger: logger) } catch { throw .peer(error) }
        let logger = self.logger
        let opened = try transport.open(
            offer: offerer.offer, log: { line in logger.info("sfu", ["server": line]) },
            lost: { [weak self] reason in self?.lost(reason) })
        if let session = opened.session as? WHIPSession {
            for skipped in session.iceServers.skipped { logger.warning("sfu ice server link skipped", ["link": skipped]) }
            state.withLock { $0.offeredICEServers = session.iceServers }
        }
        var session = opened.session
        var sessionClosed = false
        func closeSession() {
            sessionClosed = true
            do { try transport.close(session) } catch {
                logger.warning("sfu session close failed", ["reason": error])
            }
        }
        defer { if !sessionClosed { closeSession() } }
        let peer: PeerConnection
        let peerID = "sfu-\(attempt)"
        state.withLock { $0.currentPeerID = peerID }
        do {
            peer = try offerer.connect(answer: opened.answer, id: peerID, logger: logger) { [weak self] event in
                self?.handle(event, from: peerID)
            }
        } catch {
            throw .peer(error)
        }
        let stopped = state.withLock { s -> Bool in
            s.peer = peer
            s.recovery = LegRecovery(supportsRestart: true)
            s.iceFailedPending = false
            return s.stopping
        }
        if !stopped { supervise(peer, &session) }
        let reason = state.withLock { s -> String? in
            s.peer = nil
            s.currentPeerID = nil
            return s.stopping ? nil : s.lastReason
        }
        // The session ends first (WHIP DELETE, RFC 9725 §4.2; Janus unpublish, leave, destroy), then the peer
        // (DTLS close_notify): the other way round the SFU sees the PeerConnection go first and tears the
        // session down itself (simple-whip-server: "PeerConnection detected as closed"), and the DELETE
        // finds nothing (404).
        closeSession()
        peer.close(reason: reason == nil ? "stopped" : "reconnecting")
        hooks.targetBitrate(nil)
        if let reason { logger.warning("sfu leg dropped", ["server": transport.server, "reason": reason]) }
    }

    /// Waits for the leg's end (the peer closed, the server lost the session, stop), restarting ICE on the
    /// same session when it fails (``LegRecovery``); returns when the leg must be published anew or stop.
    private func supervise(_ peer: PeerConnection, _ session: inout any Sendable) {
        var rtcpSeen = 0
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(Self.feedbackCheckIntervalMillis))
            let (ended, iceFailed, restarting) = state.withLock { s in
                defer { s.iceFailedPending = false }
                return (s.stopping || s.leg == .reconnecting, s.iceFailedPending, s.recovery.phase == .restarting)
            }
            if ended { return }
            let now = MonotonicClock.nowMicros()
            let snapshot = peer.snapshot()
            if snapshot.rtcpPackets > rtcpSeen {
                rtcpSeen = snapshot.rtcpPackets
                hooks.feedbackHeard()
            }
            if !iceFailed, restarting, snapshot.iceState == .ready {
                let number = state.withLock { s in
                    _ = s.recovery.iceConnected()
                    s.iceRestartsSucceeded += 1
                    s.leg = .published
                    return s.recovery.restarts
                }
                logger.info("sfu ice restart connected", ["server": transport.server, "restart": number])
                continue
            }
            var action = state.withLock { s in iceFailed ? s.recovery.iceFailed(nowMicros: now) : s.recovery.tick(nowMicros: now) }
            if case .restartICE(let number) = action {
                state.withLock { s in
                    s.leg = .restartingICE
                    s.iceRestarts += 1
                }
                logger.warning("sfu ice restart", ["server": transport.server, "restart": number, "reason": "ICE failed"])
                do {
                    session = try restartICE(peer, session)
                    logger.info("sfu ice restart answered", ["server": transport.server, "restart": number])
                } catch {
                    action = state.withLock { $0.recovery.restartFailed(error.description) }
                }
            }
            if case .republish(let reason) = action {
                state.withLock { s in
                    s.lastReason = reason
                    s.leg = .reconnecting
                }
                logger.warning("sfu leg publishing anew", ["server": transport.server, "reason": reason])
                return
            }
        }
    }

    /// One ICE restart: new credentials, the PATCH, the server's answer applied. Returns the updated session.
    private func restartICE(_ peer: PeerConnection, _ session: any Sendable) throws(PublishingError) -> any Sendable {
        let fragment: ICERestartFragment
        do { fragment = try peer.restartICE() } catch { throw .peer(error) }
        let (answer, updated) = try transport.restartICE(session, fragment: fragment, payloadType: peer.negotiated.vp8PayloadType)
        do { try peer.applyRestartAnswer(answer) } catch { throw .peer(error) }
        return updated
    }

    /// The server ended the session (Janus killed, its session timed out, a hangup): drop the leg now
    /// rather than wait for ICE consent to fail.
    private func lost(_ reason: String) {
        let current = state.withLock { s -> Bool in
            guard !s.stopping, s.peer != nil else { return false }
            s.lastReason = reason
            s.leg = .reconnecting
            return true
        }
        if current { wake.signal() }
    }

    /// The peer's events, on its queue. Only the current peer's count: an earlier leg's peer closes on its own
    /// queue after the leg moved on, and its timers can still report a target (lower and lower without
    /// feedback), an estimate that no longer holds, or its own end, which must not end the next leg.
    private func handle(_ event: PeerConnection.Event, from peerID: String) {
        guard state.withLock({ $0.currentPeerID == peerID }) else { return }
        switch event {
        case .connected:
            state.withLock { s in
                s.leg = .published
                s.schedule.succeeded()
            }
            logger.info("sfu published", ["server": transport.server])
        case .iceConnectionFailed:
            state.withLock { $0.iceFailedPending = true }
            wake.signal()
        case .keyframeNeeded:
            hooks.requestKeyframe()
        case .dataChannel:
            break  // our offer has no application section
        case .targetBitrate(let bitrate):
            hooks.targetBitrate(bitrate)
        case .estimatedBitrate(let bitrate):
            state.withLock { $0.ceiling = bitrate }
            hooks.bitrateCeiling(bitrate)
        case .closed(let reason, _):
            // Only the current leg's end counts: a leg already dropped (lost, stop) closes with our own reason.
            let current = state.withLock { s -> Bool in
                guard s.peer != nil, s.currentPeerID == peerID else { return false }
                s.lastReason = reason
                if !s.stopping { s.leg = .reconnecting }
                return true
            }
            if current { wake.signal() }
        }
    }
}
