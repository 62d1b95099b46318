import RTP
import RTPSession
import XCTest

/// What the RTP session tests share: the stream's identity, frames and packets with known bytes, RTCP
/// compounds, and a pacer drained as a peer's timer would.
enum Session {
    static let ssrc: UInt32 = 0x1111_1111
    static let rtxSSRC: UInt32 = 0x2222_2222
    /// An NTP time for arrivals that do not matter.
    static let anyArrival = NTPTimestamp(rawValue: 0)

    /// A frame of `size` bytes `(index × 7 + seed) mod 256`.
    static func frame(_ size: Int, seed: UInt8 = 0) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) } }

    /// A media packet of our SSRC, `size` serialized bytes (12 of header), payload bytes all `fill`.
    static func packet(sequence: UInt16, size: Int = 1200, fill: UInt8? = nil, marker: Bool = false, timestamp: UInt32 = 0) -> RTPPacket {
        RTPPacket(
            marker: marker, payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc,
            payload: [UInt8](repeating: fill ?? UInt8(truncatingIfNeeded: sequence), count: size - RTPPacket.fixedHeaderSize)[...])
    }

    static func packets(_ count: Int, size: Int = 1200) -> [RTPPacket] {
        (0..<count).map { packet(sequence: UInt16($0), size: size) }
    }

    /// A compound of these RTCP packets, parsed back as the chain would get it.
    static func compound(_ packets: [RTCPPacket]) throws -> [UInt8] { try RTCPPacket.serializeCompound(packets) }

    /// A generic NACK from the receiver (SSRC 7) naming `sequenceNumbers` of `media`.
    static func nack(_ sequenceNumbers: [UInt16], media: UInt32 = ssrc) -> RTCPPacket {
        .nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: media, sequenceNumbers: sequenceNumbers))
    }

    /// A Receiver Report (from SSRC 7) with one block about `about`.
    static func receiverReport(
        about: UInt32 = ssrc, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, jitter: UInt32 = 0, lastSenderReport: UInt32 = 0,
        delay: UInt32 = 0
    ) -> RTCPPacket {
        .receiverReport(RTCPReceiverReport(ssrc: 7, reports: [RTCPReportBlock(
            ssrc: about, fractionLost: fractionLost, cumulativeLost: cumulativeLost, extendedHighestSequenceNumber: 1000, jitter: jitter,
            lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delay)]))
    }

    /// A Receiver Report whose block answers an SR sent at `sentAt`, held `delayMillis` by the receiver and
    /// arriving `rttMillis + delayMillis` later: the RTT it gives is `rttMillis`. Returns it and the arrival.
    static func roundTrip(rttMillis: UInt64, delayMillis: UInt64 = 100) -> (RTCPPacket, NTPTimestamp) {
        let sentAt = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
        let arrival = NTPTimestamp(rawValue: sentAt.rawValue + UInt64(0x1_0000_0000) * (rttMillis + delayMillis) / 1000)
        return (receiverReport(lastSenderReport: sentAt.compact, delay: UInt32(65536 * delayMillis / 1000)), arrival)
    }

    /// Feeds one RTCP packet to a feature as the chain would, with the link as given.
    static func feed<F: RTPSenderFeature>(
        _ feature: inout F, _ packet: RTCPPacket, nowMicros: UInt64 = 0, arrival: NTPTimestamp = anyArrival, link: LinkReport = LinkReport()
    ) -> FeedbackContext {
        var context = FeedbackContext(nowMicros: nowMicros, arrival: arrival, link: link)
        feature.receive(packet, context: &context)
        return context
    }

    /// Runs the pacer as the peer's timer would, returning (time µs, packet) for each release.
    static func drain(_ pacer: inout PacerQueue, from start: UInt64) -> [(UInt64, PacerQueue.Packet)] {
        var now = start
        var out: [(UInt64, PacerQueue.Packet)] = []
        while let next = pacer.nextSendMicros(nowMicros: now) {
            now = max(now, next)
            out += pacer.release(nowMicros: now).map { (now, $0) }
        }
        return out
    }
}
