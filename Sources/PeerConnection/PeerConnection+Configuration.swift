public import DataChannel
public import DTLS
public import ICE
public import RTP
public import RTPSession
import ScreencastSupport

extension PeerConnection {
    /// What every peer of a call shares: ICE settings, the DTLS certificate, pacing and timers.
    public struct Configuration: Sendable {
        /// The ICE agent's settings (the role is set to `controlled` when answering).
        public var ice: ICEAgent.Configuration
        /// Our DTLS certificate; its SHA-256 fingerprint goes into the answer (RFC 8122 §5).
        public var certificate: DTLSCertificate
        /// The send pacing (token bucket) of each peer.
        public var pacer: PacerQueue.Configuration
        /// How often a viewer waiting for its first keyframe asks again, µs.
        public var keyframeRetryMicros: UInt64
        /// RTCP Sender Report interval, µs (RFC 3550 §6.2; 1 s by default).
        public var senderReportIntervalMicros: UInt64
        /// A DTLS handshake not done this long after the answer ends the peer, µs.
        public var dtlsHandshakeTimeoutMicros: UInt64
        /// Consent to send lapses after this long without an authenticated datagram from the peer, µs (RFC 7675
        /// §5.1's 30 s; ``ConsentFreshness``); a lapse that lasts ``ICEAgent/Configuration/failedGracePeriod``
        /// more ends the peer.
        public var consentLimitMicros: UInt64 = ConsentFreshness.rfc7675LimitMicros
        /// The wall clock for Sender Reports' NTP timestamps (injected in tests).
        public var wallClock: any WallClock
        /// An offerer (``PeerConnection/Offerer``) offers transport-wide CC (``PeerOffer/transportWideCCExtensionID``
        /// and `transport-cc`): for an SFU that sends TWCC feedback when it keeps them (Janus). Off by default:
        /// with it negotiated and no feedback coming, the pacer holds frames at the start rate.
        public var offersTransportWideCC = false
        /// An answering peer accepts the viewer's Opus audio section (``SDP/AudioAnswerSection``) and sends the
        /// call's sound on it (``PeerConnection/sendAudio(_:)``). Off by default: video only.
        public var sendsAudio = false

        public init(
            ice: ICEAgent.Configuration, certificate: DTLSCertificate, pacer: PacerQueue.Configuration = .init(),
            keyframeRetryMicros: UInt64 = 1_000_000, senderReportIntervalMicros: UInt64 = 1_000_000,
            dtlsHandshakeTimeoutMicros: UInt64 = 20_000_000, wallClock: any WallClock = SystemWallClock()
        ) {
            self.ice = ice
            self.certificate = certificate
            self.pacer = pacer
            self.keyframeRetryMicros = keyframeRetryMicros
            self.senderReportIntervalMicros = senderReportIntervalMicros
            self.dtlsHandshakeTimeoutMicros = dtlsHandshakeTimeoutMicros
            self.wallClock = wallClock
        }
    }

    /// Where the connection is.
    public enum State: String, Sendable, Equatable {
        /// ICE and DTLS in progress.
        case connecting
        /// DTLS done, SRTP keyed: media flows (after the lobby's keyframe).
        case connected
        /// Ended by ``PeerConnection/close(reason:)`` or by the peer.
        case closed
        /// Ended by a failure (ICE, DTLS, timeout).
        case failed
    }

    /// What a peer reports to its owner.
    public enum Event: Sendable, Equatable {
        /// DTLS finished; media starts with the next keyframe.
        case connected
        /// The peer needs a keyframe: it just joined (the lobby), it sent PLI or FIR, or it fell behind.
        case keyframeNeeded(reason: String)
        /// The peer's REMB estimate, bits per second.
        case estimatedBitrate(UInt64)
        /// The congestion controller's new target for this peer (transport-wide CC), bits per second.
        case targetBitrate(UInt64)
        /// ICE failed while connected (its checks failed, or RFC 7675 consent lapsed: nothing authenticated
        /// from the peer for ``Configuration/consentLimitMicros``, and nothing is sent meanwhile). The peer
        /// lives on for ``ICEAgent/Configuration/failedGracePeriod``: an offerer may restart ICE meanwhile
        /// (``PeerConnection/restartICE()``).
        case iceConnectionFailed
        /// The peer is gone; nothing follows.
        case closed(reason: String, failed: Bool)
        /// Its data channels (RFC 8831): the association up or lost, a channel opened or closed (with the
        /// reason), a message.
        case dataChannel(DataChannelSession.Event)
    }
}

extension PeerConnection.Configuration {
    /// ``ICEAgent/Configuration/failedGracePeriod`` in µs: how long a lapsed consent waits for renewal or a restart.
    var consentGraceMicros: UInt64 { ice.failedGracePeriod.wholeMicroseconds }
}
