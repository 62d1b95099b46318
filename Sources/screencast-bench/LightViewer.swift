import Dispatch
import ScreencastSupport
import Synchronization
import DTLS
import ICE
import RTP
import SDP
import SRTP

/// A WHEP viewer that costs next to nothing: it completes ICE (libnice, controlling) and the DTLS
/// handshake, then counts the SRTP/SRTCP datagrams that arrive and drops them without decrypting or
/// decoding. For fan-out measurements, where real viewers (aiortc decodes every frame) would take the CPU
/// being measured. Its only RTCP is an empty Receiver Report + SDES a second (RFC 3550 §6.4.2: every
/// participant reports; the call's consent freshness, RFC 7675, is renewed by it): no REMB, no NACK, so the
/// call keeps its configured bitrate.
///
/// DTLS runs on a serial queue of its own; media datagrams are only counted, on the ICE agent's thread.
final class LightViewer: @unchecked Sendable {
    // @unchecked Sendable: `agent`, `dtls`, `timer`, `location`, `joinedMicros` and `connectedMicros` are
    // touched only on `queue` (or before the agent starts delivering); the counters are atomics.
    let index: Int
    private let queue: DispatchQueue
    private var agent: ICEAgent?
    private var dtls: DTLSEndpoint?
    private var timer: (any DispatchSourceTimer)?
    private var location: String?
    private var joinedMicros: UInt64 = 0
    private var connectedMicros: UInt64?
    private var failure: String?
    /// SRTCP for our reports, keyed once DTLS is done; when the next report is due (µs).
    private var reporter: SRTPSender?
    private var nextReportMicros: UInt64 = 0
    private static let ssrc: UInt32 = 0x4C49_4748  // "LIGH": a receiver's SSRC, only named in its own reports
    private let mediaPackets = Atomic<Int>(0)
    private let mediaBytes = Atomic<Int>(0)
    private let controlPackets = Atomic<Int>(0)

    init(index: Int) {
        self.index = index
        queue = DispatchQueue(label: "bench.viewer.\(index)")
    }

    /// Gathers, POSTs the offer, applies the answer and starts DTLS; returns once the answer is applied
    /// (the handshake goes on in the background).
    func join(client: WHEPClient, certificate: DTLSCertificate) throws {
        let agent = try ICEAgent(
            // UDP only, as a browser whose UDP works connects: no TCP sockets or checks per light viewer.
            configuration: ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.1"], iceTCP: false),
            logger: Logger(component: "viewer.ice", threshold: .warning),
            onEvent: { [weak self] event in
                if case .expired(let why) = event { self?.expired(why) }
            },
            onDatagram: { [weak self] datagram in self?.received(datagram) })
        self.agent = agent
        let candidates = try agent.gatherCandidates()
        let offer = Self.offer(credentials: agent.localCredentials, fingerprint: certificate.fingerprint, candidates: candidates)
        joinedMicros = MonotonicClock.nowMicros()
        let (answer, location) = try client.post(offer: offer)
        self.location = location
        let remote = try RemoteAnswer(parsing: answer)
        try agent.setRemoteCredentials(.init(ufrag: remote.ufrag, password: remote.password))
        _ = try agent.addRemoteCandidates(remote.candidates)
        agent.remoteCandidatesComplete()
        // The answerer's a=setup:active makes it the DTLS client, so we are the server (and the reverse).
        let dtls = try DTLSEndpoint(configuration: DTLSConfiguration(
            role: remote.setup == "passive" ? .client : .server, certificate: certificate, remoteFingerprints: remote.fingerprints))
        queue.sync {
            self.dtls = dtls
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.onTimer() }
            timer.schedule(deadline: .now() + .milliseconds(50), repeating: .milliseconds(50))
            timer.resume()
            self.timer = timer
            do { try dtls.start(nowMicros: MonotonicClock.nowMicros()) } catch { failure = "DTLS: \(error)" }
            flush()
        }
    }

    /// DELETEs the session and closes DTLS (close_notify) and ICE.
    func leave(client: WHEPClient) {
        let location = queue.sync { () -> String? in
            timer?.cancel()
            dtls?.close()
            flush()
            return self.location
        }
        if let location { _ = try? client.delete(location: location) }
        agent?.close()
    }

    var isConnected: Bool { queue.sync { connectedMicros != nil } }

    var report: JSONValue {
        queue.sync {
            .object([
                ("index", .number(index)),
                ("connected", .bool(connectedMicros != nil)),
                ("connectMs", connectedMicros.map { .double(Double($0 - joinedMicros) / 1000) } ?? .null),
                ("mediaPackets", .number(mediaPackets.load(ordering: .relaxed))),
                ("mediaBytes", .number(mediaBytes.load(ordering: .relaxed))),
                ("rtcpPackets", .number(controlPackets.load(ordering: .relaxed))),
                ("error", failure.map { .string($0) } ?? .null),
            ])
        }
    }

    // MARK: On the agent's thread / the queue

    private func received(_ datagram: [UInt8]) {
        guard let first = datagram.first else { return }
        if (128...191).contains(first) {
            // RTP, or RTCP (RFC 5761: payload types 200…206 with the marker bit, i.e. second byte 192…223).
            if datagram.count > 1, (192...223).contains(datagram[1]) {
                controlPackets.add(1, ordering: .relaxed)
            } else {
                mediaPackets.add(1, ordering: .relaxed)
                mediaBytes.add(datagram.count, ordering: .relaxed)
            }
        } else if (20...63).contains(first) {
            queue.async { self.handleDTLS(datagram) }
        }
    }

    private func expired(_ why: ICEAgent.Expiry) {
        queue.async { self.failure = self.failure ?? "ICE \(why.rawValue)" }
    }

    private func handleDTLS(_ datagram: [UInt8]) {
        guard let dtls else { return }
        do { try dtls.receive(datagram, nowMicros: MonotonicClock.nowMicros()) } catch { failure = "DTLS: \(error)" }
        flush()
        if connectedMicros == nil, case .connected = dtls.state { connectedMicros = MonotonicClock.nowMicros() }
    }

    private func onTimer() {
        guard let dtls else { return }
        let now = MonotonicClock.nowMicros()
        report(now)
        guard let due = dtls.nextTimeout, now >= due else { return }
        do { try dtls.handleTimeout(nowMicros: now) } catch { failure = "DTLS: \(error)" }
        flush()
    }

    /// Once connected, an SRTCP-protected empty RR + SDES CNAME every second.
    private func report(_ now: UInt64) {
        guard let dtls, let agent, case .connected(let keys) = dtls.state, now >= nextReportMicros else { return }
        nextReportMicros = now + 1_000_000
        do {
            if reporter == nil { reporter = try SRTPSender(key: keys.writeKey(of: dtls.role)) }
            var compound = try RTCPPacket.emptyReceiverReport(ssrc: Self.ssrc, cname: "bench-viewer-\(index)")
            try reporter?.protectRTCP(&compound)
            agent.send(compound)
        } catch {
            failure = failure ?? "RTCP: \(error)"
        }
    }

    private func flush() {
        guard let dtls, let agent else { return }
        for datagram in dtls.takeDatagrams() { agent.send(datagram) }
    }

    // MARK: SDP

    /// A recvonly VP8 offer with all our candidates (no RTX, no trickle).
    static func offer(credentials: ICEAgent.Credentials, fingerprint: Fingerprint, candidates: [ICECandidate]) -> String {
        var lines = [
            "v=0", "o=- \(UInt64.random(in: 1...UInt64(Int64.max))) 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0",
            "a=ice-ufrag:\(credentials.ufrag)", "a=ice-pwd:\(credentials.password)",
            "a=fingerprint:\(fingerprint.sdpValue)", "a=setup:actpass", "a=mid:0", "a=recvonly", "a=rtcp-mux", "a=rtcp-rsize",
            "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtcp-fb:96 ccm fir",
        ]
        lines += candidates.map { "a=\($0.description)" }
        lines.append("a=end-of-candidates")
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// What a viewer needs of the call's answer: ICE credentials and candidates, fingerprints, `a=setup`.
struct RemoteAnswer {
    var ufrag = ""
    var password = ""
    var fingerprints: [Fingerprint] = []
    var setup = "active"
    var candidates: [String] = []

    init(parsing sdp: String) throws {
        for raw in sdp.split(whereSeparator: \.isNewline) {
            let line = String(raw)
            if line.hasPrefix("a=ice-ufrag:") { ufrag = String(line.dropFirst(12)) }
            else if line.hasPrefix("a=ice-pwd:") { password = String(line.dropFirst(10)) }
            else if line.hasPrefix("a=fingerprint:") { fingerprints.append(try Fingerprint(sdpValue: String(line.dropFirst(14)))) }
            else if line.hasPrefix("a=setup:") { setup = String(line.dropFirst(8)) }
            else if line.hasPrefix("a=candidate:") { candidates.append(String(line.dropFirst(2))) }
        }
        guard !ufrag.isEmpty, !password.isEmpty, !fingerprints.isEmpty else {
            throw BenchError("answer without ICE credentials or fingerprint:\n\(sdp.prefix(400))")
        }
    }
}
