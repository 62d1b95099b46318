import Dispatch
import Foundation
import RTP
import ScreencastSupport
import Synchronization
import TestSupport
import DTLS
import ICE
import PeerConnection
import SDP
import RTPSession
import SRTP
import XCTest

/// A live ``PeerConnection`` (libnice ICE, OpenSSL DTLS, libsrtp SRTP on 127.0.0.1) watched by an
/// in-process viewer built from the same real libraries, which then sends it bad datagrams of every kind
/// from the validated ICE pair (the peer's own address): forged, replayed and short SRTCP, authenticated
/// RTCP that does not parse, RTP, DTLS records that cannot be genuine, and bytes in no RFC 7983 range.
/// Each must be counted by kind in `/stats` and dropped; the peer stays connected, its media still
/// decrypts at the viewer, and genuine RTCP (a PLI) still works afterwards.
final class PeerConnectionBadInputTests: XCTestCase {
    func testBadDatagramsOfEveryKindAreCountedAndDroppedWhileMediaFlows() throws {
        let (peer, viewer, events) = try Self.connectedPeer()
        defer { peer.close(); viewer.close() }
        let ssrc = peer.local.videoSSRC
        XCTAssertTrue(Self.mediaArrives(peer: peer, viewer: viewer), "media before the bad input")
        let before = peer.snapshot()
        let plisBefore = events.count { $0 == .keyframeNeeded(reason: "PLI/FIR") }

        var datagrams: [[UInt8]] = []
        // SRTCP whose tag fails (the last byte flipped); the genuine twin of the last one follows.
        var twin: [UInt8] = []
        for _ in 0..<3 {
            twin = try viewer.protect(pliFor: ssrc)
            var forged = twin
            forged[forged.count - 1] ^= 0x01
            datagrams.append(forged)
        }
        datagrams.append(twin)
        // A replay of a genuine one.
        let genuine = try viewer.protect(pliFor: ssrc)
        datagrams += [genuine, genuine]
        // Too short to carry SRTCP's trailer.
        datagrams += [[0x81, 0xC9, 0, 1, 0, 0, 0, 1], [0x80, 0xC8]]
        // Authenticated, but an RR whose length field claims 32 bytes of 8.
        datagrams.append(try viewer.protect(rtcp: [0x81, 0xC9, 0x00, 0x07, 0x00, 0x00, 0x5E, 0xE5]))
        // RTP: the peer only sends media.
        datagrams += (0..<3).map { [0x80, 0x60, 0, UInt8($0)] + Array(repeating: 0xAA, count: 96) }
        // First bytes in no range (4–15, 80–127, 192–255), ZRTP's, and STUN's and TURN ChannelData's that
        // the ICE agent does not take as its own (a STUN length field past the end; no TURN allocation).
        datagrams += [[0x05, 1, 2, 3], [0x50] + Array(repeating: 1, count: 40), [0xC0, 0xC9, 0, 0], [0xFF], [0x10, 0, 0, 0, 0x5A]]
        datagrams += [[0x00, 0x01, 0xFF, 0xFF] + Array(repeating: 0x21, count: 16), [0x40, 0x00, 0x00, 0x04, 1, 2, 3, 4]]
        // DTLS: the issue's 36-byte datagram (an epoch-1 record with a 23-byte body), a plaintext fatal
        // alert, and a forged epoch-1 alert long enough for OpenSSL to judge (and discard for its tag).
        datagrams.append(DTLSRecordBytes.record(body: DTLSRecordBytes.filler(23)))
        datagrams.append(DTLSRecordBytes.record(type: 21, epoch: 0, body: [2, 40]))
        datagrams.append(DTLSRecordBytes.record(type: 21, sequence: 0x4000, body: DTLSRecordBytes.filler(26)))
        // Genuine feedback after all of it.
        datagrams.append(try viewer.protect(pliFor: ssrc))
        XCTAssertEqual(datagrams.count, 23)

        for datagram in datagrams { XCTAssertEqual(viewer.agent.send(datagram), .sent) }
        let after = try Self.waitForDatagrams(datagrams.count, since: before, peer: peer)
        var expected = before.droppedDatagrams
        expected.srtcpAuthenticationFailed += 3
        expected.srtcpReplayed += 1
        expected.srtcpMalformed += 2
        expected.rtcpMalformed += 1
        expected.rtp += 3
        expected.unknown += 4
        expected.zrtp += 1
        expected.stun += 1
        expected.turnChannel += 1
        expected.dtls += 2
        XCTAssertEqual(after.droppedDatagrams, expected)
        XCTAssertEqual(after.ignoredDatagrams - before.ignoredDatagrams, 19)
        XCTAssertEqual(after.rtcpPackets - before.rtcpPackets, 3, "the twin, the first of the replayed pair, the last PLI")
        XCTAssertEqual(after.dtls.recordsDropped[.shorterThanCipherOverhead], 1)
        XCTAssertEqual(after.dtls.recordsDropped[.epoch], 1)
        XCTAssertEqual(after.dtls.recordsPassed - before.dtls.recordsPassed, 1, "the forged alert reached OpenSSL")
        XCTAssertEqual(after.state, .connected)
        XCTAssertTrue(events.wait(seconds: 3) { $0.count { $0 == .keyframeNeeded(reason: "PLI/FIR") } == plisBefore + 3 },
                      "each genuine PLI asks for a keyframe: \(events.all)")
        XCTAssertTrue(Self.mediaArrives(peer: peer, viewer: viewer), "media after the bad input")
        guard case .connected = viewer.dtlsState else { return XCTFail("the viewer's DTLS: \(viewer.dtlsState)") }
        XCTAssertFalse(events.all.contains { if case .closed = $0 { true } else { false } })

        let json = after.json.serialized
        XCTAssertTrue(json.contains("\"droppedDatagrams\":{\"unknown\":4,"), json)
        XCTAssertTrue(json.contains("\"srtcpAuthenticationFailed\":3,\"srtcpReplayed\":1,\"srtcpMalformed\":2"), json)
        XCTAssertTrue(json.contains("\"shorterThanCipherOverhead\":1"), json)
    }

    /// Seeded random datagrams in every RFC 7983 range from the peer's address (half the DTLS ones shaped as
    /// DTLS 1.2 epoch-1 records, half the RTP-range ones with RTCP's packet types): none ends the peer, each
    /// is counted as dropped under its kind, and media and feedback work afterwards.
    func testAFloodOfRandomDatagramsNeverEndsThePeer() throws {
        let (peer, viewer, events) = try Self.connectedPeer()
        defer { peer.close(); viewer.close() }
        XCTAssertTrue(Self.mediaArrives(peer: peer, viewer: viewer))
        let before = peer.snapshot()
        var generator = SeededGenerator(seed: 23)
        var sent: [DatagramKind: Int] = [:]
        let firstBytes: [ClosedRange<UInt8>] = [0...3, 4...15, 16...19, 20...63, 64...79, 80...127, 128...191, 192...255]
        for index in 0..<800 {
            var datagram = (0..<Int.random(in: 1...1200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            datagram[0] = UInt8.random(in: firstBytes[index % firstBytes.count], using: &generator)
            let shaped = index % 16 < 8 && datagram.count > 13
            if shaped, (20...63).contains(datagram[0]) {
                // Half the DTLS ones are record-shaped: DTLS 1.2, epoch 1, a length that fits (short or not).
                datagram[0] = 20 + datagram[0] % 4
                datagram.replaceSubrange(1..<5, with: [0xFE, 0xFD, 0, 1])
                let length = datagram.count - 13
                datagram.replaceSubrange(11..<13, with: [UInt8(length >> 8), UInt8(length & 0xFF)])
            } else if shaped, (128...191).contains(datagram[0]) {
                datagram[1] = UInt8.random(in: 200...206, using: &generator)  // RTCP's packet types
            }
            sent[DatagramKind.classify(datagram), default: 0] += 1
            XCTAssertEqual(viewer.agent.send(datagram), .sent)
            if index % 10 == 9 { usleep(2_000) }  // stay within the socket buffers
        }
        let after = try Self.waitForDatagrams(800, since: before, peer: peer)
        let dropped = after.droppedDatagrams, was = before.droppedDatagrams
        let dtlsPassed = after.dtls.recordsPassed - before.dtls.recordsPassed
        XCTAssertEqual(dropped.unknown - was.unknown, sent[.unknown] ?? 0)
        XCTAssertEqual(dropped.zrtp - was.zrtp, sent[.zrtp] ?? 0)
        XCTAssertEqual(dropped.stun - was.stun, sent[.stun] ?? 0, "no random bytes pass as STUN with the ICE agent")
        XCTAssertEqual(dropped.turnChannel - was.turnChannel, sent[.turnChannel] ?? 0)
        XCTAssertEqual(dropped.rtp - was.rtp, sent[.rtp] ?? 0)
        // A DTLS datagram is counted when none of its records reached OpenSSL (which discards the rest).
        XCTAssertLessThanOrEqual(dropped.dtls - was.dtls, sent[.dtls] ?? 0)
        XCTAssertGreaterThanOrEqual(dropped.dtls - was.dtls, (sent[.dtls] ?? 0) - dtlsPassed)
        let srtcp = (dropped.srtcpAuthenticationFailed + dropped.srtcpMalformed + dropped.srtcpReplayed + dropped.srtcpOther)
            - (was.srtcpAuthenticationFailed + was.srtcpMalformed + was.srtcpReplayed + was.srtcpOther)
        XCTAssertEqual(srtcp, sent[.rtcp] ?? 0, "random bytes never authenticate")
        XCTAssertEqual(after.rtcpPackets, before.rtcpPackets)
        XCTAssertEqual(after.state, .connected)
        print("peer flood: sent \(sent.sorted { "\($0.key)" < "\($1.key)" }.map { "\($0.key) \($0.value)" }), dropped \(dropped), DTLS records to OpenSSL \(dtlsPassed), dropped before it \(after.dtls.recordsDropped)")

        let plis = events.count { $0 == .keyframeNeeded(reason: "PLI/FIR") }
        XCTAssertEqual(viewer.agent.send(try viewer.protect(pliFor: peer.local.videoSSRC)), .sent)
        XCTAssertTrue(events.wait(seconds: 3) { $0.count { $0 == .keyframeNeeded(reason: "PLI/FIR") } == plis + 1 })
        XCTAssertTrue(Self.mediaArrives(peer: peer, viewer: viewer), "media after the flood")
    }

    /// STUN from the peer's address that no valid check would send (RFC 8489 §6, RFC 8445 §7.2.5): a
    /// Binding request without credentials, one with our USERNAME and a wrong MESSAGE-INTEGRITY claiming
    /// the controlling role, error (487 role conflict) and success responses to no transaction. libnice
    /// (0.1.21) acts on none of them and passes them up as data: the peer counts them as dropped STUN; the
    /// pair stays selected, the peer connected, media flowing.
    func testForgedSTUNFromThePeersAddressChangesNothing() throws {
        let (peer, viewer, _) = try Self.connectedPeer()
        defer { peer.close(); viewer.close() }
        let before = peer.snapshot()
        let username = Array("\(peer.local.iceUfrag):\(viewer.agent.localCredentials.ufrag)".utf8)
        let padded = username + Array(repeating: 0, count: (4 - username.count % 4) % 4)
        let controlling: [UInt8] = [0x80, 0x2A, 0, 8] + Array(repeating: 0xFF, count: 8)  // ICE-CONTROLLING, top tie-breaker
        let attributes: [UInt8] = [0x00, 0x06, 0, UInt8(username.count)] + padded + controlling
            + [0x00, 0x08, 0, 20] + Array(repeating: 0x5A, count: 20)  // MESSAGE-INTEGRITY, wrong
        let forged = [
            Self.stun(type: 0x0001, attributes: []),
            Self.stun(type: 0x0001, attributes: attributes),
            Self.stun(type: 0x0111, attributes: [0x00, 0x09, 0, 4, 0, 0, 4, 87]),  // ERROR-CODE 487
            Self.stun(type: 0x0101, attributes: [0x00, 0x20, 0, 8, 0, 1, 0x12, 0x34, 0x7F, 0, 0, 1]),  // XOR-MAPPED-ADDRESS
        ]
        for _ in 0..<5 {
            for datagram in forged { XCTAssertEqual(viewer.agent.send(datagram), .sent) }
        }
        let after = try Self.waitForDatagrams(5 * forged.count, since: before, peer: peer)
        XCTAssertEqual(after.state, .connected)
        XCTAssertEqual(after.iceState, before.iceState)
        XCTAssertEqual(after.selectedPair, before.selectedPair)
        XCTAssertEqual(after.droppedDatagrams.stun - before.droppedDatagrams.stun, 5 * forged.count)
        XCTAssertEqual(after.droppedDatagrams.total - before.droppedDatagrams.total, 5 * forged.count)
        XCTAssertTrue(Self.mediaArrives(peer: peer, viewer: viewer), "media after the forged STUN")
    }

    // MARK: Helpers

    /// A STUN message (RFC 8489 §5): type, length, magic cookie, a random transaction ID, `attributes`.
    static func stun(type: UInt16, attributes: [UInt8]) -> [UInt8] {
        [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(attributes.count >> 8), UInt8(attributes.count & 0xFF), 0x21, 0x12, 0xA4, 0x42]
            + (0..<12).map { _ in UInt8.random(in: 0...255) } + attributes
    }

    /// A peer answering a fresh viewer's offer, both connected (ICE, DTLS, SRTP keyed on both sides).
    static func connectedPeer() throws -> (PeerConnection, LoopbackViewer, PeerEventLog) {
        let viewer = try LoopbackViewer()
        let events = PeerEventLog()
        let configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.generate())
        let peer = try PeerConnection.answering(
            offer: viewer.offer, id: "bad-input-peer", configuration: configuration,
            logger: Logger(component: "peer", threshold: .warning), onEvent: events.record)
        try viewer.connect(to: peer)
        let deadline = Date().addingTimeInterval(10)
        while peer.snapshot().state != .connected || !viewer.isKeyed {
            guard Date() < deadline else {
                throw ICETestFailure("not connected: peer \(peer.snapshot().state) \(peer.snapshot().endReason ?? ""), viewer \(viewer.dtlsState)")
            }
            usleep(10_000)
        }
        return (peer, viewer, events)
    }

    /// Sends a keyframe through the peer and waits until the viewer decrypted packets of it.
    static func mediaArrives(peer: PeerConnection, viewer: LoopbackViewer) -> Bool {
        let start = viewer.mediaPackets
        let frame = (0..<6000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        peer.send(OutgoingVideoFrame(bytes: frame, isKeyframe: true, captureMicros: MonotonicClock.nowMicros()))
        let deadline = Date().addingTimeInterval(3)
        while viewer.mediaPackets < start + 5 {
            guard Date() < deadline else { return false }
            usleep(5_000)
        }
        return viewer.mediaRefused == 0
    }

    /// Waits until the peer has taken `count` more datagrams than in `before` (or 3 s pass), then returns
    /// its snapshot.
    static func waitForDatagrams(_ count: Int, since before: PeerConnection.Snapshot, peer: PeerConnection) throws -> PeerConnection.Snapshot {
        let deadline = Date().addingTimeInterval(3)
        var now = peer.snapshot()
        while now.datagramsReceived < before.datagramsReceived + count, Date() < deadline {
            usleep(10_000)
            now = peer.snapshot()
        }
        XCTAssertEqual(now.datagramsReceived - before.datagramsReceived, count, "datagrams that reached the peer")
        return now
    }
}

/// The events a peer reported, for polling from the test.
final class PeerEventLog: Sendable {
    private let events = Mutex<[PeerConnection.Event]>([])

    @Sendable func record(_ event: PeerConnection.Event) { events.withLock { $0.append(event) } }
    var all: [PeerConnection.Event] { events.withLock { $0 } }
    func count(where matches: (PeerConnection.Event) -> Bool) -> Int { all.filter(matches).count }

    /// Polls until `condition` holds (true) or `seconds` pass (false).
    func wait(seconds: Double, until condition: ([PeerConnection.Event]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(all) {
            guard Date() < deadline else { return false }
            usleep(5_000)
        }
        return true
    }
}

/// A viewer in this process for a ``PeerConnection``: a controlling libnice agent on 127.0.0.1, an OpenSSL
/// DTLS endpoint, libsrtp to decrypt the call's RTP and to protect our RTCP with the exported keys.
final class LoopbackViewer: @unchecked Sendable {
    // @unchecked Sendable: `agent` is thread-safe; every `var` is touched only on `queue`.
    let agent: ICEAgent
    private let certificate: DTLSCertificate
    private let candidates: [ICECandidate]
    private let queue = DispatchQueue(label: "test.loopback-viewer")
    private var dtls: DTLSEndpoint?
    private var timer: (any DispatchSourceTimer)?
    private var rtpReceiver: SRTPReceiver?
    private var rtcpSender: SRTPSender?
    private var media = 0
    private var refused = 0

    init() throws {
        certificate = try DTLSCertificate.generate()
        let relay = Relay()
        agent = try ICEAgent(
            configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"]),
            logger: Logger(component: "viewer.ice", threshold: .warning), onEvent: { _ in },
            onDatagram: { datagram in relay.viewer?.received(datagram) })
        candidates = try agent.gatherCandidates()
        relay.viewer = self
    }

    /// Hands datagrams from the agent's thread to the viewer (set once, before any arrive).
    private final class Relay: @unchecked Sendable {
        // @unchecked Sendable: `viewer` is written once, before the agent has a peer to hear from.
        weak var viewer: LoopbackViewer?
    }

    /// A recvonly VP8 offer with NACK/PLI/FIR feedback and all our candidates.
    var offer: String {
        let media = [
            "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:0", "a=recvonly", "a=rtcp-mux",
            "a=ice-ufrag:\(agent.localCredentials.ufrag)", "a=ice-pwd:\(agent.localCredentials.password)",
            "a=fingerprint:\(certificate.fingerprint.sdpValue)", "a=setup:actpass",
            "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtcp-fb:96 ccm fir",
        ] + candidates.map { "a=\($0.description)" } + ["a=end-of-candidates"]
        let session = ["v=0", "o=- 4242 1 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0"]
        return (session + media).joined(separator: "\r\n") + "\r\n"
    }

    /// Learns the peer's ICE parameters and starts DTLS in the role its answer left us.
    func connect(to peer: PeerConnection) throws {
        try agent.setRemoteCredentials(.init(ufrag: peer.local.iceUfrag, password: peer.local.icePwd))
        _ = try agent.addRemoteCandidates(peer.local.candidates)
        agent.remoteCandidatesComplete()
        let endpoint = try DTLSEndpoint(configuration: DTLSConfiguration(
            role: peer.negotiated.dtlsRole.peer, certificate: certificate, remoteFingerprints: [peer.local.fingerprint]))
        queue.sync {
            dtls = endpoint
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.onTimer() }
            timer.schedule(deadline: .now() + .milliseconds(20), repeating: .milliseconds(20))
            timer.resume()
            self.timer = timer
            try? endpoint.start(nowMicros: MonotonicClock.nowMicros())
            flush()
        }
    }

    var isKeyed: Bool { queue.sync { rtpReceiver != nil } }
    var dtlsState: DTLSState { queue.sync { dtls?.state ?? .idle } }
    /// Packets of the call's stream that decrypted, and those that did not.
    var mediaPackets: Int { queue.sync { media } }
    var mediaRefused: Int { queue.sync { refused } }

    /// A PLI for `ssrc` (RFC 4585 §6.3.1), protected as SRTCP.
    func protect(pliFor ssrc: UInt32) throws -> [UInt8] {
        try protect(rtcp: RTCPPacket.serializeCompound([.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 0x5EE5, mediaSSRC: ssrc))]))
    }

    /// `rtcp` protected as SRTCP with our write key.
    func protect(rtcp: [UInt8]) throws -> [UInt8] {
        try queue.sync {
            var packet = rtcp
            guard let rtcpSender else { throw ICETestFailure("not keyed") }
            try rtcpSender.protectRTCP(&packet)
            return packet
        }
    }

    func close() {
        queue.sync {
            timer?.cancel()
            dtls?.close()
            flush()
        }
        agent.close()
    }

    // MARK: On the queue

    private func received(_ datagram: [UInt8]) {
        queue.async { self.handle(datagram) }
    }

    private func handle(_ datagram: [UInt8]) {
        switch DatagramKind.classify(datagram) {
        case .dtls:
            guard let dtls else { return }
            try? dtls.receive(datagram, nowMicros: MonotonicClock.nowMicros())
            flush()
            if rtpReceiver == nil, let keys = dtls.keyingMaterial {
                rtpReceiver = try? SRTPReceiver(key: keys.writeKey(of: dtls.role.peer))
                rtcpSender = try? SRTPSender(key: keys.writeKey(of: dtls.role))
            }
        case .rtp:
            var packet = datagram
            do {
                try rtpReceiver?.unprotectRTP(&packet)
                media += 1
            } catch {
                refused += 1
            }
        default: break
        }
    }

    private func onTimer() {
        guard let dtls, let due = dtls.nextTimeout, MonotonicClock.nowMicros() >= due else { return }
        try? dtls.handleTimeout(nowMicros: MonotonicClock.nowMicros())
        flush()
    }

    private func flush() {
        guard let dtls else { return }
        for datagram in dtls.takeDatagrams() { _ = agent.send(datagram) }
    }
}
