/// Splits encoded VP8 frames into RTP packets (RFC 7741 §4), one call per frame.
///
/// Every packet carries the 4-byte descriptor (RFC 7741 §4.2) with X = 1, I = 1 and a 15-bit PictureID
/// (M = 1), the same for all packets of a frame and incremented per frame:
/// ```
///  first packet of a frame        other packets
/// +-+-+-+-+-+-+-+-+              +-+-+-+-+-+-+-+-+
/// |1|0|0|1|0|0 0 0|  X, S, PID 0 |1|0|0|0|0|0 0 0|  X, PID 0
/// +-+-+-+-+-+-+-+-+              +-+-+-+-+-+-+-+-+
/// |1|0|0|0|0 0 0 0|  I           |1|0|0|0|0 0 0 0|  I
/// +-+-+-+-+-+-+-+-+              +-+-+-+-+-+-+-+-+
/// |1| PictureID   |  M = 1       |1| PictureID   |
/// +-+-+-+-+-+-+-+-+              +-+-+-+-+-+-+-+-+
/// |   PictureID   |              |   PictureID   |
/// +-+-+-+-+-+-+-+-+              +-+-+-+-+-+-+-+-+
/// ```
/// N (non-reference, RFC 7741 §4.2: "the frame can be discarded without affecting any other future or past
/// frames") is set on every packet of a frame packetized with `nonReference` (first byte `0xB0`, then `0xA0`),
/// as libwebrtc marks frames libvpx reports `VPX_FRAME_IS_DROPPABLE`.
/// The frame is cut into near-equal pieces so no packet exceeds ``maxPacketSize``; the marker bit is set
/// on the last packet (RFC 7741 §4.1); sequence numbers are consecutive across frames (wrapping at 65535).
///
/// Everything random (initial sequence number and PictureID) is passed in, so the same inputs always give
/// the same bytes.
public struct VP8Payloader: Sendable {
    /// Largest whole RTP packet in bytes (header + descriptor + VP8 data), before SRTP adds its tag.
    public let maxPacketSize: Int
    public let ssrc: UInt32
    /// The negotiated VP8 payload type (from the SDP answer), 0…127.
    public let payloadType: UInt8
    /// The sequence number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16
    /// The 15-bit PictureID the next frame gets.
    public private(set) var nextPictureID: UInt16

    /// Default ``maxPacketSize``: 1200 bytes, which fits any path's MTU after SRTP, UDP and IP overhead.
    public static let defaultMaxPacketSize = 1200
    /// Bytes of the descriptor this payloader writes.
    public static let descriptorSize = 4
    /// The most packets one frame may take (a frame beyond it is refused, not sent).
    public static let maxPacketsPerFrame = 16_384

    /// - Parameters:
    ///   - ssrc: this stream's SSRC.
    ///   - payloadType: the VP8 payload type, 0…127.
    ///   - initialSequenceNumber: the first packet's sequence number (RFC 3550 §5.1: random).
    ///   - initialPictureID: the first frame's PictureID (masked to 15 bits).
    ///   - maxPacketSize: largest RTP packet in bytes; must leave room for 12 header + 4 descriptor bytes
    ///     and at least one byte of VP8 data.
    public init(
        ssrc: UInt32, payloadType: UInt8, initialSequenceNumber: UInt16, initialPictureID: UInt16,
        maxPacketSize: Int = VP8Payloader.defaultMaxPacketSize
    ) throws(RTPError) {
        let overhead = RTPPacket.fixedHeaderSize + Self.descriptorSize
        guard maxPacketSize > overhead else {
            throw .packetSizeTooSmall(maxPacketSize: maxPacketSize, headerSize: overhead)
        }
        guard payloadType <= 127 else { throw .malformed(.rtpHeader, "payload type \(payloadType) above 127") }
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.maxPacketSize = maxPacketSize
        nextSequenceNumber = initialSequenceNumber
        nextPictureID = initialPictureID & 0x7FFF
    }

    /// Same, with the initial sequence number and PictureID drawn from `generator`.
    public init(
        ssrc: UInt32, payloadType: UInt8, maxPacketSize: Int = VP8Payloader.defaultMaxPacketSize,
        using generator: inout some RandomNumberGenerator
    ) throws(RTPError) {
        try self.init(
            ssrc: ssrc, payloadType: payloadType, initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &generator),
            initialPictureID: UInt16.random(in: 0...0x7FFF, using: &generator), maxPacketSize: maxPacketSize)
    }

    /// Bytes of VP8 data one packet can carry.
    public var maxDataPerPacket: Int { maxPacketSize - RTPPacket.fixedHeaderSize - Self.descriptorSize }

    /// How many packets a frame of `frameSize` bytes takes.
    public func packetCount(forFrameSize frameSize: Int) -> Int {
        (frameSize + maxDataPerPacket - 1) / maxDataPerPacket
    }

    /// Packetizes one encoded frame, calling `emit` with each complete RTP packet in sending order.
    ///
    /// The packet is lent in a scratch buffer reused for the next packet: copy it (into the SRTP buffer, the
    /// history) before returning, and nothing is allocated per packet. Keeping the array itself is allowed
    /// too; the next write then copies.
    /// - Parameters:
    ///   - frame: the encoded VP8 frame, non-empty.
    ///   - rtpTimestamp: the frame's 90 kHz timestamp, derived from capture time by the caller.
    ///   - nonReference: set the descriptor's N bit (a frame no other frame refers to).
    /// - Returns: the number of packets emitted.
    @discardableResult
    public mutating func packetize(
        frame: ArraySlice<UInt8>, rtpTimestamp: UInt32, nonReference: Bool = false, emit: (_ packet: [UInt8]) -> Void
    ) throws(RTPError) -> Int {
        var scratch: [UInt8] = []
        scratch.reserveCapacity(RTPPacket.fixedHeaderSize + Self.descriptorSize + maxDataPerPacket)
        let payloadType = payloadType, ssrc = ssrc
        return try forEachPiece(of: frame, nonReference: nonReference) { sequenceNumber, marker, descriptor, data in
            scratch.removeAll(keepingCapacity: true)
            RTPPacket.appendFixedHeader(
                to: &scratch, marker: marker, payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: rtpTimestamp,
                ssrc: ssrc)
            scratch.append(contentsOf: descriptor)
            scratch.append(contentsOf: data)
            emit(scratch)
        }
    }

    /// Packetizes one encoded frame into packets as header + payload, in sending order: each payload is
    /// the 4-byte descriptor and the frame's piece, in an array of its own (one allocation per packet, which
    /// the retransmission history and the pacer then share). `nonReference` sets the descriptor's N bit.
    /// - Throws: ``RTPError/unsendableFrame(bytes:packetsNeeded:limit:)`` for an empty or too large frame.
    public mutating func packets(frame: ArraySlice<UInt8>, rtpTimestamp: UInt32, nonReference: Bool = false) throws(RTPError) -> [RTPPacket] {
        var packets: [RTPPacket] = []
        packets.reserveCapacity(packetCount(forFrameSize: frame.count))
        let payloadType = payloadType, ssrc = ssrc
        try forEachPiece(of: frame, nonReference: nonReference) { sequenceNumber, marker, descriptor, data in
            var payload: [UInt8] = []
            payload.reserveCapacity(Self.descriptorSize + data.count)
            payload.append(contentsOf: descriptor)
            payload.append(contentsOf: data)
            packets.append(RTPPacket(
                marker: marker, payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: rtpTimestamp, ssrc: ssrc,
                payload: payload[...]))
        }
        return packets
    }

    /// Cuts `frame` into near-equal pieces (the first `remainder` carry one byte more than the rest) and calls
    /// `body` with each piece's sequence number, marker, descriptor and data; advances the sequence number
    /// and the PictureID.
    @discardableResult
    private mutating func forEachPiece(
        of frame: ArraySlice<UInt8>, nonReference: Bool = false,
        _ body: (_ sequenceNumber: UInt16, _ marker: Bool, _ descriptor: [UInt8], _ data: ArraySlice<UInt8>) -> Void
    ) throws(RTPError) -> Int {
        let count = packetCount(forFrameSize: frame.count)
        guard !frame.isEmpty, count <= Self.maxPacketsPerFrame else {
            throw .unsendableFrame(bytes: frame.count, packetsNeeded: count, limit: Self.maxPacketsPerFrame)
        }
        let base = frame.count / count
        let remainder = frame.count % count
        let pictureID = nextPictureID
        let high = 0x80 | UInt8(truncatingIfNeeded: pictureID >> 8)  // M = 1, PictureID high
        let low = UInt8(truncatingIfNeeded: pictureID)
        // X = 1 and S on the first packet, PID 0, N for a non-reference frame; I = 1; then the 15-bit PictureID.
        let n: UInt8 = nonReference ? 0x20 : 0
        let first: [UInt8] = [0x90 | n, 0x80, high, low], rest: [UInt8] = [0x80 | n, 0x80, high, low]
        var start = frame.startIndex
        for index in 0..<count {
            let length = base + (index < remainder ? 1 : 0)
            body(nextSequenceNumber, index == count - 1, index == 0 ? first : rest, frame[start..<(start + length)])
            start += length
            nextSequenceNumber &+= 1
        }
        nextPictureID = (pictureID &+ 1) & 0x7FFF
        return count
    }

    /// Packetizes one encoded frame into new arrays, one per RTP packet (convenient; allocates per packet).
    public mutating func packetize(frame: [UInt8], rtpTimestamp: UInt32) throws(RTPError) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        packets.reserveCapacity(packetCount(forFrameSize: frame.count))
        try packetize(frame: frame[...], rtpTimestamp: rtpTimestamp) { packets.append($0) }
        return packets
    }
}
