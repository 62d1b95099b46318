// Fuzz target: RTCP compound packets (RFC 3550 §6, RFC 4585 §6, RFC 5104 §4.3.1, REMB) as the sender side
// of a call reads them after SRTCP unprotection: RTCPPacket.parseCompound, then RTPSenderChain.receiveRTCP
// with a retransmission history of real packets.
//
// Input: [mode] then records [length u16] [milliseconds since the last u8] [compound bytes…]
//   mode bit 0: RTX negotiated; bit 1: NACK negotiated; bit 2: duplicate retransmissions above 2 % loss;
//   bits 3–4: the sender's SSRC is 0x3a5e91c7 (the seeds' media SSRC), 0x7b1f002d, 0 or 0xffffffff.
// Before each record (at most 64) the sender packetizes one frame of 200–2199 bytes (history to NACK).
// Properties: parsing ends in packets or a typed RTPError; parsed packets serialise without error and
// parse back to the same packets (a REMB bitrate rounded to what its 18-bit mantissa holds); handling never traps, retransmits only packets it sent (the originals, or
// RTX packets that unwrap to them), at most two copies per NACKed sequence number, asks for a keyframe only
// for a PLI or FIR naming our SSRC, reports a REMB estimate only from a REMB for us; a compound that does not parse
// has no effect but its count.
import RTP
@testable import RTPSession

private let ssrcs: [UInt32] = [0x3A5E_91C7, 0x7B1F_002D, 0, 0xFFFF_FFFF]
private let rtxSSRC: UInt32 = 0x0BAD_CAFE

/// Records read at most per input: a call's RTCP over that many report intervals (each record sends a frame
/// first, the bulk of an input's cost, so an input as long as -max_len allows would be hundreds of frames).
private let maxRecords = 64

/// The started sender of each configuration (mode bits 0–4), built on first use: RTPSenderChain is a value
/// type, so every input works on its own copy and nothing carries over.
nonisolated(unsafe) private var startedSenders = [RTPSenderChain?](repeating: nil, count: 32)
private let startMicros: UInt64 = 1_000_000

private func startedSender(_ mode: UInt8) -> RTPSenderChain {
    let variant = Int(mode & 0x1F)
    if let sender = startedSenders[variant] { return sender }
    var feedback = RTPSenderChain.Configuration.Feedback.all
    feedback.nack = mode & 2 != 0
    let configuration = RTPSenderChain.Configuration(
        ssrc: ssrcs[Int(mode >> 3) & 3], payloadType: 96, rtx: mode & 1 != 0 ? .init(ssrc: rtxSSRC, payloadType: 97) : nil, cname: "fuzz",
        initialSequenceNumber: 1230, historyPackets: 64, historyBytes: 64 * 1200, feedback: feedback,
        duplicateRetransmissionsAboveLoss: mode & 4 != 0 ? 0.02 : nil)
    guard var sender = try? RTPSenderChain(configuration: configuration) else { violated("a valid sender configuration was refused") }
    _ = sender.start(nowMicros: startMicros, sendsMedia: true)
    startedSenders[variant] = sender
    return sender
}

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let ssrc = ssrcs[Int(mode >> 3) & 3]
    var sender = startedSender(mode)
    var now = startMicros

    var sent: [UInt16: [UInt8]] = [:]
    var frame = 0
    while !input.isAtEnd, frame < maxRecords {
        let length = Int(input.u16()) % 1501
        now += UInt64(input.byte()) * 1000
        let compound = Array(input.take(length))

        frame += 1
        let size = 200 + (frame * 977) % 2000  // 1 or 2 packets
        let outgoing = OutgoingVideoFrame(bytes: [UInt8](repeating: UInt8(truncatingIfNeeded: frame), count: size), isKeyframe: frame == 1, captureMicros: now)
        guard (try? sender.send(outgoing, nowMicros: now)) != nil else { violated("sending a \(size)-byte frame failed") }
        // Everything the pacer holds goes out (from 10 s later, over as many releases as its burst needs),
        // media first time only.
        for packet in drain(&sender, from: now + 10_000_000) {
            check(packet.kind == .media, "a retransmission left before any NACK was read")
            sent[UInt16(packet.bytes[2]) << 8 | UInt16(packet.bytes[3])] = packet.bytes
        }

        let parsed = roundTrip(compound)
        let before = sender.statistics
        let outcome = sender.receiveRTCP(compound, nowMicros: now, arrival: NTPTimestamp(unixMicroseconds: now))
        let resent = drain(&sender, from: now + 20_000_000)
        now += 20_000_000
        checkOutcome(outcome, resent: resent, parsed: parsed, ssrc: ssrc, sender: sender, before: before, sent: sent)
    }
}

/// Releases until the pacer holds nothing, 100 ms apart (at most 90 releases, so 9 s): one release lets out
/// only its burst (`PacerQueue.Configuration.burstBytes`, 12 kB), so a NACK of many packets, two copies each
/// above the loss threshold, leaves over several. (A single release here let the rest of a NACK's
/// retransmissions out with the next frame's media, which the property above mistook for unasked ones.)
private func drain(_ sender: inout RTPSenderChain, from start: UInt64) -> [RTPSenderChain.OutgoingPacket] {
    var out: [RTPSenderChain.OutgoingPacket] = []
    for step in 0..<90 {
        let released = sender.release(nowMicros: start + UInt64(step) * 100_000)
        if released.isEmpty { break }
        out += released
    }
    return out
}

private func roundTrip(_ compound: [UInt8]) -> [RTCPPacket]? {
    let packets: [RTCPPacket]
    do {
        packets = try RTCPPacket.parseCompound(compound)
    } catch {
        return nil  // typed: RTPError
    }
    let again: [UInt8]
    do {
        again = try RTCPPacket.serializeCompound(packets)
    } catch {
        violated("parsed RTCP \(packets) does not serialise: \(error)")
    }
    do {
        let reparsed = try RTCPPacket.parseCompound(again)
        check(reparsed == packets.map(representable), "RTCP changed on re-serialisation: \(packets) → \(reparsed)")
    } catch {
        violated("our serialisation \(again) of \(packets) does not parse: \(error)")
    }
    return packets
}

/// The packet as its serialisation can carry it: a REMB bitrate rounded down to 18 bits of mantissa (a parsed
/// one beyond 64 bits reads as UInt64.max, documented on RTCPRemb.bitrate).
private func representable(_ packet: RTCPPacket) -> RTCPPacket {
    guard case .estimatedBitrate(var remb) = packet else { return packet }
    let (exponent, mantissa) = RTCPRemb.encode(bitrate: remb.bitrate)
    remb.bitrate = UInt64(mantissa) << exponent
    return .estimatedBitrate(remb)
}

private func checkOutcome(
    _ outcome: SenderOutcome, resent: [RTPSenderChain.OutgoingPacket], parsed: [RTCPPacket]?, ssrc: UInt32,
    sender: RTPSenderChain, before: RTPSenderChain.Statistics, sent: [UInt16: [UInt8]]
) {
    let after = sender.statistics
    guard let packets = parsed else {
        check(outcome == SenderOutcome(), "a refused compound had an effect: \(outcome)")
        check(resent.isEmpty, "a refused compound made retransmissions")
        check(after.rtcpIgnored == before.rtcpIgnored + 1, "a refused compound was not counted")
        return
    }
    var nacked = 0
    var keyframe = false
    var remb: UInt64?
    for packet in packets {
        switch packet {
        case .nack(let nack) where nack.mediaSSRC == ssrc: nacked += nack.sequenceNumbers.count
        case .pictureLossIndication(let pli) where pli.mediaSSRC == ssrc: keyframe = true
        case .fullIntraRequest(let fir) where fir.entries.contains { $0.ssrc == ssrc }: keyframe = true
        case .estimatedBitrate(let estimate) where estimate.ssrcs.isEmpty || estimate.ssrcs.contains(ssrc): remb = estimate.bitrate
        default: break
        }
    }
    check(outcome.keyframeRequest == nil || keyframe, "a keyframe was requested without a PLI or FIR for our SSRC")
    check(remb != nil || outcome.estimatedBitrate == nil, "a REMB estimate \(String(describing: outcome.estimatedBitrate)) without a REMB for us")
    check(resent.count <= 2 * nacked, "\(resent.count) retransmissions for \(nacked) NACKed packets")
    let rtx = sender.configuration.rtx
    for outgoing in resent {
        check(outgoing.kind == .retransmission, "new media left after reading RTCP")
        guard let packet = try? RTPPacket(parsing: outgoing.bytes) else { violated("a retransmission does not parse as RTP") }
        var original = packet
        if let rtx {
            check(packet.ssrc == rtx.ssrc && packet.payloadType == rtx.payloadType, "RTX packet on SSRC \(packet.ssrc) PT \(packet.payloadType)")
            guard let unwrapped = try? RTXPacketizer.unwrap(packet, originalSSRC: ssrc, originalPayloadType: 96) else {
                violated("an RTX retransmission does not unwrap")
            }
            original = unwrapped
        }
        guard let sentBytes = sent[original.sequenceNumber], let sentPacket = try? RTPPacket(parsing: sentBytes) else {
            violated("retransmitted sequence number \(original.sequenceNumber) was never sent")
        }
        check(sameBytes(original.payload, sentPacket.payload) && original.timestamp == sentPacket.timestamp,
              "retransmission of \(original.sequenceNumber) differs from what was sent")
    }
    check(after.rtcpIgnored >= before.rtcpIgnored && after.keyframeRequests >= before.keyframeRequests, "a counter went down")
}
