import DTLS
import RTP
import SDP
import SRTP
import XCTest

/// A WebRTC viewer for in-memory tests, made of the same units as our side (DTLS, SRTP, RTP) and nothing
/// else: it offers (recvonly VP8 + RTX, the offer built by ``VideoOfferBuilder``), reads our answer, runs
/// the other end of DTLS, unprotects SRTP, unwraps RTX (RFC 4588), reassembles frames (RFC 7741) and sends
/// what a browser would: NACKs for gaps (RFC 4585 §6.2.1), PLI on request, Receiver Reports answering our
/// Sender Reports (RFC 3550 §6.4.2), REMB on request, BYE.
final class TestViewer {
    static let ssrc: UInt32 = 0x5EE5_0001
    let certificate: DTLSCertificate
    /// Our answer's stream: its SSRCs and payload types.
    private(set) var mediaSSRC: UInt32 = 0
    private(set) var rtxSSRC: UInt32?
    private(set) var rtxPayloadType: UInt8?
    private(set) var vp8PayloadType: UInt8 = 0
    private var dtls: DTLSEndpoint?
    private var receiver: SRTPReceiver?
    private var sender: SRTPSender?
    private var depayloader = VP8Depayloader()
    /// Frames reassembled, in order.
    private(set) var frames: [(frame: VP8Depayloader.Frame, arrivalMicros: UInt64)] = []
    private var lastNacked: [UInt16: UInt64] = [:]
    private var lastSenderReport: (ntp: NTPTimestamp, arrivalMicros: UInt64)?
    private var nextReportMicros: UInt64 = 0
    private(set) var counts = (rtp: 0, rtx: 0, senderReports: 0, nacks: 0, nackedPackets: 0, srtpFailures: 0)
    /// How long a NACKed packet is left before asking again (a couple of round trips).
    var renackMicros: UInt64 = 40_000
    /// Offers transport-wide CC with this extension ID and sends TWCC feedback every 100 ms (as Chromium
    /// does once it is negotiated); nil: REMB-era viewer.
    let transportWideCCID: UInt8?
    private var twcc: TransportFeedbackGenerator?
    /// RTP packets that carried a transport-wide number, and their payload bytes per arrival second.
    private(set) var numberedPackets = 0
    private(set) var bytesPerSecond: [UInt64: Int] = [:]
    /// Offers an Opus audio section (`opus/48000/2`, payload type ``opusPayloadType``) bundled after the video.
    let offersAudio: Bool
    static let opusPayloadType: UInt8 = 111
    /// Our answer's audio SSRC (0: none answered).
    private(set) var audioSSRC: UInt32 = 0
    /// Opus RTP packets received (unprotected), in arrival order, with their transport-wide number (or nil).
    private(set) var audioPackets: [(packet: RTPPacket, twcc: UInt16?)] = []
    /// Every Sender Report received, in order, with its arrival.
    private(set) var senderReports: [(report: RTCPSenderReport, arrivalMicros: UInt64)] = []

    init(transportWideCC: UInt8? = nil, audio: Bool = false) throws {
        certificate = try DTLSCertificate.generate(commonName: "test-viewer", validityDays: 1)
        transportWideCCID = transportWideCC
        offersAudio = audio
    }

    /// The recvonly offer: our units build a sendonly one, whose direction is then turned around; `setup`
    /// as given (`actpass` makes us the DTLS server, `passive` the client).
    func offer(setup: DTLSSetup = .actpass) throws -> String {
        let local = LocalMediaParameters(
            iceUfrag: "view", icePwd: "viewerpassword01234567", fingerprint: certificate.fingerprint,
            candidates: [try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 9 typ host")],
            videoSSRC: 0x5EE5_0002, rtxSSRC: 0x5EE5_0003, cname: "viewer", mediaStreamID: nil, sessionID: 77)
        var offer = try VideoOfferBuilder.offer(
            local: local, vp8PayloadType: 100, rtxPayloadType: 101, transportWideCCExtensionID: transportWideCCID)
        offer.media[0].attributes = offer.media[0].attributes.compactMap { attribute in
            switch attribute {
            case .direction: .direction(.recvonly)
            case .setup: .setup(setup)
            case .ssrc, .ssrcGroup: nil
            default: attribute
            }
        }
        if offersAudio {
            var audio = MediaDescription(
                kind: "audio", port: 9, proto: offer.media[0].proto, formats: ["\(Self.opusPayloadType)"], connection: .unspecified)
            audio.attributes = [.mid("1"), .direction(.recvonly), .rtcpMux]
                + (transportWideCCID.map { [.extmap(ExtensionMap(id: $0, uri: VideoAnswerBuilder.transportWideCCURI))] } ?? [])
                + [.rtpmap(RTPMap(payloadType: Self.opusPayloadType, encodingName: "opus", clockRate: 48_000, channels: 2))]
                + (transportWideCCID == nil ? [] : [.rtcpFeedback(RTCPFeedbackAttribute(payloadType: Self.opusPayloadType, type: "transport-cc"))])
            offer.media.append(audio)
            offer.attributes = [.group(SDPGroup(semantics: "BUNDLE", mids: [offer.media[0].mid ?? "0", "1"]))]
        }
        return offer.serialized()
    }

    /// Reads our answer: fingerprints and `a=setup` for DTLS, the FID group and payload types for RTP.
    func accept(answer text: String) throws {
        let answer = try SDPParser().parse(text)
        // The answerer's a=setup:active makes it the DTLS client, so we are the server (and the reverse).
        try configure(from: answer, role: answer.media.first?.setup == .active ? .server : .client)
    }

    /// Answers our offer (``PeerOffer``) as an SFU would: ``VideoAnswerBuilder``'s answer turned recvonly,
    /// with `a=setup:<setup>` (`active`: the viewer is the DTLS client), without SSRCs of its own.
    func answer(offer text: String, setup: DTLSSetup) throws -> String {
        let offer = try SDPParser().parse(text)
        let local = LocalMediaParameters(
            iceUfrag: "view", icePwd: "viewerpassword01234567", fingerprint: certificate.fingerprint,
            candidates: [try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 9 typ host")],
            videoSSRC: 0x5EE5_0002, rtxSSRC: 0x5EE5_0003, cname: "viewer", mediaStreamID: nil, sessionID: 78)
        var answer = try VideoAnswerBuilder.answer(offer, local: local).answer
        answer.media[0].attributes = answer.media[0].attributes.compactMap { attribute in
            switch attribute {
            case .direction: .direction(.recvonly)
            case .setup: .setup(setup)
            case .ssrc, .ssrcGroup: nil
            default: attribute
            }
        }
        try configure(from: offer, role: setup == .active ? .client : .server)
        return answer.serialized()
    }

    /// Our stream's SSRCs and payload types from our description; DTLS in `role` against its fingerprints.
    private func configure(from description: SessionDescription, role: DTLSRole) throws {
        let media = try XCTUnwrap(description.media.first)
        for attribute in media.attributes {
            if case .ssrcGroup(let group) = attribute, group.semantics == "FID" {
                mediaSSRC = group.ssrcs[0]
                rtxSSRC = group.ssrcs[1]
            } else if case .ssrc(let ssrc) = attribute, mediaSSRC == 0 {
                mediaSSRC = ssrc.ssrc
            }
        }
        for case .ssrc(let ssrc) in description.media.first(where: { $0.kind == "audio" && $0.port != 0 })?.attributes ?? [] {
            audioSSRC = ssrc.ssrc
        }
        vp8PayloadType = try XCTUnwrap(media.rtpMaps.first { $0.encodingName == "VP8" }).payloadType
        rtxPayloadType = media.rtpMaps.first { $0.encodingName == "rtx" }?.payloadType
        if let id = transportWideCCID, media.extensionMaps.contains(where: { $0.id == id }) {
            twcc = TransportFeedbackGenerator(configuration: .init(senderSSRC: Self.ssrc, mediaSSRC: mediaSSRC))
        }
        dtls = try DTLSEndpoint(configuration: DTLSConfiguration(role: role, certificate: certificate, remoteFingerprints: media.fingerprints))
    }

    var isConnected: Bool { receiver != nil }

    func start(nowMicros now: UInt64) throws -> [[UInt8]] {
        let dtls = try XCTUnwrap(dtls)
        try dtls.start(nowMicros: now)
        return dtls.takeDatagrams()
    }

    /// One datagram from us; returns what the viewer sends back at once (DTLS flights, NACKs).
    func receive(_ datagram: [UInt8], nowMicros now: UInt64) throws -> [[UInt8]] {
        let dtls = try XCTUnwrap(dtls)
        switch DatagramKind.classify(datagram) {
        case .dtls:
            try dtls.receive(datagram, nowMicros: now)
            if receiver == nil, let keys = dtls.keyingMaterial {
                receiver = try SRTPReceiver(key: keys.writeKey(of: dtls.role.peer))
                sender = try SRTPSender(key: keys.writeKey(of: dtls.role))
            }
            return dtls.takeDatagrams()
        case .rtp:
            var packet = datagram
            guard let receiver else { return [] }
            do { try receiver.unprotectRTP(&packet) } catch {
                counts.srtpFailures += 1
                return []
            }
            let parsed = try RTPPacket(parsing: packet)
            bytesPerSecond[now / 1_000_000, default: 0] += packet.count
            var number: UInt16?
            if let id = transportWideCCID, let read = try TransportWideSequenceNumber.read(from: parsed, id: id) {
                number = read
                numberedPackets += 1
                twcc?.record(sequenceNumber: read, arrivalMicros: Int64(now))
            }
            if audioSSRC != 0, parsed.ssrc == audioSSRC {
                audioPackets.append((parsed, number))
                return []
            }
            try media(parsed, now)
            return try nack(now)
        case .rtcp:
            var packet = datagram
            guard let receiver else { return [] }
            do { try receiver.unprotectRTCP(&packet) } catch {
                counts.srtpFailures += 1
                return []
            }
            for case .senderReport(let report) in try RTCPPacket.parseCompound(packet) {
                senderReports.append((report, now))
                guard report.ssrc == mediaSSRC else { continue }
                counts.senderReports += 1
                lastSenderReport = (report.ntpTimestamp, now)
            }
            return []
        case .stun, .zrtp, .turnChannel, .unknown:
            return []
        }
    }

    /// The viewer's timers: DTLS retransmission, frames given up, NACKs repeated, a Receiver Report every
    /// 500 ms once connected.
    func tick(nowMicros now: UInt64) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        if let dtls, let due = dtls.nextTimeout, now >= due {
            try dtls.handleTimeout(nowMicros: now)
            out += dtls.takeDatagrams()
        }
        guard isConnected else { return out }
        frames += depayloader.poll(nowMilliseconds: now / 1000).map { ($0, now) }
        out += try nack(now)
        if let feedback = twcc?.feedback(nowMicros: Int64(now)), !feedback.isEmpty {
            var compound: [UInt8] = []
            for packet in feedback { try packet.serialize(into: &compound) }
            try XCTUnwrap(sender).protectRTCP(&compound)
            out.append(compound)
        }
        if now >= nextReportMicros {
            nextReportMicros = now + 500_000
            out.append(try control([receiverReport(now)]))
        }
        return out
    }

    /// When ``tick(nowMicros:)`` has something to do next.
    func nextDeadline(nowMicros now: UInt64) -> UInt64 {
        let dtlsDue = dtls?.nextTimeout ?? .max
        return isConnected ? min(dtlsDue, now + 10_000) : dtlsDue
    }

    /// PLI (RFC 4585 §6.3.1): the picture is lost, send a keyframe.
    func pictureLoss() throws -> [UInt8] {
        try control([.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: Self.ssrc, mediaSSRC: mediaSSRC))])
    }

    /// REMB with this estimate for our stream.
    func estimate(_ bitsPerSecond: UInt64) throws -> [UInt8] {
        try control([.estimatedBitrate(RTCPRemb(senderSSRC: Self.ssrc, bitrate: bitsPerSecond, ssrcs: [mediaSSRC]))])
    }

    /// RTCP BYE: the viewer leaves.
    func goodbye() throws -> [UInt8] { try control([.goodbye(RTCPGoodbye(ssrcs: [Self.ssrc]))]) }

    /// DTLS close_notify.
    func closeDTLS() throws -> [[UInt8]] {
        let dtls = try XCTUnwrap(dtls)
        dtls.close()
        return dtls.takeDatagrams()
    }

    var depayloaderStatistics: VP8Depayloader.Statistics { depayloader.statistics }

    // MARK: Internals

    private func media(_ packet: RTPPacket, _ now: UInt64) throws {
        var original = packet
        if let rtxSSRC, packet.ssrc == rtxSSRC {
            counts.rtx += 1
            if packet.payload.isEmpty, packet.paddingCount > 0 { return }  // probe padding (as Chromium discards it)
            original = try RTXPacketizer.unwrap(packet, originalSSRC: mediaSSRC, originalPayloadType: vp8PayloadType)
        } else {
            XCTAssertEqual(packet.ssrc, mediaSSRC)
            XCTAssertEqual(packet.payloadType, vp8PayloadType)
            counts.rtp += 1
        }
        frames += try depayloader.insert(original, arrivalMilliseconds: now / 1000).map { ($0, now) }
    }

    /// NACKs the gaps the depayloader sees, each again after ``renackMicros``.
    private func nack(_ now: UInt64) throws -> [[UInt8]] {
        let missing = depayloader.missingSequenceNumbers().filter { sequence in
            guard let last = lastNacked[sequence] else { return true }
            return now >= last + renackMicros
        }
        guard !missing.isEmpty else { return [] }
        for sequence in missing { lastNacked[sequence] = now }
        counts.nacks += 1
        counts.nackedPackets += missing.count
        return [try control([receiverReport(now), .nack(RTCPGenericNACK(senderSSRC: Self.ssrc, mediaSSRC: mediaSSRC, sequenceNumbers: missing))])]
    }

    /// A report block about our stream answering the last SR (LSR, and DLSR in 1/65536 s).
    private func receiverReport(_ now: UInt64) -> RTCPPacket {
        let lsr = lastSenderReport?.ntp.compact ?? 0
        let dlsr = lastSenderReport.map { UInt32((now - $0.arrivalMicros) * 65536 / 1_000_000) } ?? 0
        let block = RTCPReportBlock(
            ssrc: mediaSSRC, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0, jitter: 0, lastSenderReport: lsr,
            delaySinceLastSenderReport: dlsr)
        return .receiverReport(RTCPReceiverReport(ssrc: Self.ssrc, reports: [block]))
    }

    private func control(_ packets: [RTCPPacket]) throws -> [UInt8] {
        var compound = try RTCPPacket.serializeCompound(packets)
        try XCTUnwrap(sender).protectRTCP(&compound)
        return compound
    }
}
