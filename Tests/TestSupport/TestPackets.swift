public import RTP

/// RTP packets for tests, the same bytes every time for the same arguments.
public enum TestPackets {
    /// A serialized RTP packet (RFC 3550 §5.1): payload type 96, the marker on every third sequence number,
    /// timestamp `90 000 × sequence`, and `payloadSize` payload bytes `(index × 7 + sequence) mod 256`.
    public static func rtp(
        sequence: UInt16, ssrc: UInt32 = 0x1122_3344, payloadSize: Int = 1000, csrcs: [UInt32] = [],
        extension headerExtension: RTPHeaderExtension? = nil
    ) throws -> [UInt8] {
        let payload = (0..<payloadSize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(sequence)) }
        return try RTPPacket(
            marker: sequence % 3 == 0, payloadType: 96, sequenceNumber: sequence, timestamp: 90_000 &* UInt32(sequence),
            ssrc: ssrc, csrcs: csrcs, headerExtension: headerExtension, payload: payload[...]
        ).serialized()
    }
}
