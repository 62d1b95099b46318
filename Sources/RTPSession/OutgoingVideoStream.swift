public import RTP

/// One encoded VP8 frame to send to a peer (the shared encoder's output, without the `Media` types).
public struct OutgoingVideoFrame: Sendable {
    /// The VP8 frame (RFC 6386 §9.1).
    public var bytes: [UInt8]
    public var isKeyframe: Bool
    /// Capture time, CLOCK_MONOTONIC µs: the RTP timestamp derives from it, never from send time.
    public var captureMicros: UInt64
    /// A non-reference interframe (the encoder's `isDroppable`: libvpx `VP8_EFLAG_NO_UPD_LAST | _GF | _ARF |
    /// VP8_EFLAG_NO_UPD_ENTROPY`): no other frame refers to it, so a sender over its thinning budget may leave it
    /// out with no keyframe (``RTPSenderChain/send(_:nowMicros:)``); sent with the descriptor's N bit. Never
    /// true for a keyframe.
    public var isDroppable: Bool

    /// `isDroppable` is forced false for a keyframe.
    public init(bytes: [UInt8], isKeyframe: Bool, captureMicros: UInt64, isDroppable: Bool = false) {
        self.bytes = bytes
        self.isKeyframe = isKeyframe
        self.captureMicros = captureMicros
        self.isDroppable = isDroppable && !isKeyframe
    }
}

/// A peer's VP8 media stream (RFC 7741) as header + payload packets: one SSRC, sequence numbers that
/// continue across frames, PictureIDs per peer, and RTP timestamps from capture time.
///
/// ```
///   frame (bytes, keyframe?, capture µs) ──packetize──▶ [RTPPacket] (≤ maxPacketSize, marker on the last)
///        RTP timestamp = offset + capture µs × 90 / 1000 (mod 2³²), the offset random per peer (RFC 3550 §5.1)
/// ```
///
/// Sans-I/O and deterministic: every random starting point is passed in, so the same inputs give the same
/// packets. Counts what it made for the Sender Report (RFC 3550 §6.4.1) and `/stats`.
public struct OutgoingVideoStream: Sendable {
    /// What the stream has made so far.
    public struct Statistics: Sendable, Equatable {
        /// Encoded frames packetized, and of them keyframes.
        public var framesSent = 0
        public var keyframesSent = 0
        /// Media packets packetized (RTP, first transmissions).
        public var packetsSent = 0
        /// Their payload bytes (the SR's octet count, RFC 3550 §6.4.1).
        public var payloadBytesSent = 0
        /// Their whole RTP bytes (headers included, before SRTP).
        public var rtpBytesSent = 0

        public init() {}

        /// True once a media packet was made (Sender Reports before that would map a stream nobody has seen).
        public var hasSentMedia: Bool { packetsSent > 0 }
    }

    /// The media SSRC (RFC 3550 §8.1).
    public let ssrc: UInt32
    public private(set) var statistics = Statistics()
    private var payloader: VP8Payloader
    private let clock: RTPTimestampMapper

    /// - Parameters:
    ///   - ssrc: the stream's SSRC, random per peer.
    ///   - payloadType: the negotiated VP8 payload type, 0…127.
    ///   - timestampOffset: the RTP timestamp of capture time 0 (random, RFC 3550 §5.1).
    ///   - initialSequenceNumber / initialPictureID: where the stream starts (random).
    ///   - maxPacketSize: the largest RTP packet before SRTP, bytes.
    /// - Throws: ``RTPSessionError/invalidConfiguration(_:)`` when the size leaves no room for VP8 data or
    ///   the payload type is above 127.
    public init(
        ssrc: UInt32, payloadType: UInt8, timestampOffset: UInt32, initialSequenceNumber: UInt16, initialPictureID: UInt16,
        maxPacketSize: Int = VP8Payloader.defaultMaxPacketSize
    ) throws(RTPSessionError) {
        self.ssrc = ssrc
        do {
            payloader = try VP8Payloader(
                ssrc: ssrc, payloadType: payloadType, initialSequenceNumber: initialSequenceNumber,
                initialPictureID: initialPictureID, maxPacketSize: maxPacketSize)
        } catch {
            throw .invalidConfiguration("\(error)")
        }
        clock = RTPTimestampMapper(clockRate: 90_000, offset: timestampOffset, originMicroseconds: 0)
    }

    /// The sequence number the next media packet gets.
    public var nextSequenceNumber: UInt16 { payloader.nextSequenceNumber }

    /// The RTP timestamp of a monotonic time, µs (a capture time, or "now" for a Sender Report).
    public func rtpTimestamp(captureMicros: UInt64) -> UInt32 { clock.rtpTimestamp(forMicroseconds: captureMicros) }

    /// Packetizes one encoded frame and counts it.
    /// - Throws: ``RTPSessionError/unsendableFrame(_:)`` for an empty frame or one of more than
    ///   ``RTP/VP8Payloader/maxPacketsPerFrame`` packets; nothing is counted then.
    public mutating func packetize(_ frame: OutgoingVideoFrame, nowMicros now: UInt64) throws(RTPSessionError) -> PacketizedFrame {
        let packets: [RTPPacket]
        do {
            packets = try payloader.packets(
                frame: frame.bytes[...], rtpTimestamp: rtpTimestamp(captureMicros: frame.captureMicros),
                nonReference: frame.isDroppable && !frame.isKeyframe)
        } catch {
            throw .unsendableFrame(error)
        }
        for packet in packets {
            statistics.rtpBytesSent += packet.serializedSize
            statistics.payloadBytesSent += packet.payload.count
        }
        statistics.packetsSent += packets.count
        statistics.framesSent += 1
        if frame.isKeyframe { statistics.keyframesSent += 1 }
        return PacketizedFrame(packets: packets, isKeyframe: frame.isKeyframe, captureMicros: frame.captureMicros, nowMicros: now)
    }
}
