import RTP
import ICE
public import ScreencastSupport
import SDP
import Synchronization

extension PeerConnection {
    /// The publishing side of a connection (WHIP, Janus): gathers every candidate, makes the offer
    /// (``PeerOffer``: sendonly VP8 + RTX, `a=setup:actpass`, `a=end-of-candidates`), and turns the SFU's
    /// answer into a running ``PeerConnection`` (ICE controlling; DTLS server when the answer says
    /// `a=setup:active`, client for `passive`).
    ///
    /// ```
    ///   Offerer(configuration:) ── gather all candidates ──▶ offer ── (HTTP, the owner's job) ──▶ answer
    ///   connect(answer:) ── PeerOffer.accept, remote credentials/candidates, start ──▶ PeerConnection
    /// ```
    ///
    /// Used once: ``connect(answer:id:logger:onEvent:)`` hands the ICE agent to the connection; an offerer
    /// dropped before that closes its agent.
    public final class Offerer: @unchecked Sendable {
        // @unchecked Sendable: `plan`, `agent`, `relay`, `configuration` are immutable or thread-safe;
        // `used` is a Mutex.

        /// The offer to send (SDP text).
        public var offer: String { plan.offer }
        public let plan: PeerOffer
        private let agent: ICEAgent
        private let relay = PeerConnectionRelay()
        private let configuration: Configuration
        private let used = Mutex(false)

        /// Gathers candidates (blocks for the gathering, at most `configuration.ice.gatheringTimeLimit`) and
        /// builds the offer.
        /// - Throws: ``PeerConnectionError/ice(_:)`` (libnice, gathering),
        ///   ``PeerConnectionError/sdp(_:)`` (our parameters).
        public init(configuration: Configuration, logger: Logger) throws(PeerConnectionError) {
            var iceConfiguration = configuration.ice
            iceConfiguration.role = .controlling
            let relay = self.relay
            let agent = try ice { () throws(ICEError) in
                try ICEAgent(
                    configuration: iceConfiguration, logger: logger.named("ice"),
                    onEvent: { event in relay.iceEvent(event) }, onDatagram: { datagram in relay.datagram(datagram) })
            }
            do throws(PeerConnectionError) {
                let candidates = try ice { () throws(ICEError) in try agent.gatherCandidates() }
                var random = SecureRandomNumberGenerator()  // not the empty SystemRandomNumberGenerator: see its doc
                plan = try PeerOffer(ice: agent.localCredentials, candidates: candidates, configuration: configuration, using: &random)
            } catch {
                agent.close()
                throw error
            }
            self.agent = agent
            self.configuration = configuration
        }

        deinit {
            if !used.withLock({ $0 }) { agent.close() }
        }

        /// Applies the SFU's answer and starts ICE and DTLS; media starts once DTLS completes.
        /// - Throws: ``PeerConnectionError/sdp(_:)`` for an answer that does not parse or cannot be used,
        ///   ``PeerConnectionError/ice(_:)`` for its credentials, ``PeerConnectionError/dtls(_:)``;
        ///   ``PeerConnectionError/invalidConfiguration(_:)`` when called twice.
        public func connect(
            answer text: String, id: String, logger: Logger, onEvent: @escaping @Sendable (Event) -> Void
        ) throws(PeerConnectionError) -> PeerConnection {
            let first = used.withLock { used -> Bool in
                defer { used = true }
                return !used
            }
            guard first else { throw .invalidConfiguration("an offerer connects once") }
            do throws(PeerConnectionError) {
                let (negotiated, sender) = try plan.accept(answer: text)
                let machine = try PeerConnectionStateMachine(
                    id: id, negotiated: negotiated, certificate: configuration.certificate, sender: sender,
                    dtlsHandshakeTimeoutMicros: configuration.dtlsHandshakeTimeoutMicros,
                consentLimitMicros: configuration.consentLimitMicros, consentGraceMicros: configuration.consentGraceMicros, logger: logger,
                    nowMicros: MonotonicClock.nowMicros())
                let peer = PeerConnection(
                    answer: text, negotiated: negotiated, local: plan.local, machine: machine, agent: agent,
                    wallClock: configuration.wallClock, onEvent: onEvent, id: id)
                relay.set(peer)
                let remote = negotiated.remote
                try ice { () throws(ICEError) in try agent.setRemoteCredentials(.init(ufrag: remote.iceUfrag, password: remote.icePwd)) }
                let usable = (try? agent.addOfferedCandidates(remote.candidates)) ?? 0
                if remote.candidatesComplete, usable > 0 { agent.remoteCandidatesComplete() }
                peer.start()
                logger.info("offer answered", [
                    "peer": id, "candidates.remote": remote.candidates.count, "candidates.usable": usable,
                    "dtls": negotiated.dtlsRole == .server ? "server" : "client", "rtx": negotiated.rtxPayloadType != nil,
                    "direction": negotiated.direction.rawValue, "ssrc": plan.local.videoSSRC,
                ])
                return peer
            } catch {
                agent.close()
                throw error
            }
        }
    }
}
