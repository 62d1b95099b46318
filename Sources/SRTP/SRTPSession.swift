internal import CSRTP

/// Protects our outgoing RTP and RTCP with one direction's master key (RFC 3711; AES-GCM per RFC 7714).
///
/// Owns one libsrtp session whose policy covers every SSRC we send (`ssrc_any_outbound`), so the video and
/// RTX streams share the key, each with its own rollover counter. Not thread-safe: one sending thread (the
/// pacer) owns it. The receiving direction is an ``SRTPReceiver``, so the two never share libsrtp state.
///
/// Packets are protected in place in the caller's buffer, which must have room after the packet for
/// ``SRTPProtectionProfile/rtpOverhead`` (or ``SRTPProtectionProfile/rtcpOverhead``) bytes; nothing is
/// allocated per packet.
public final class SRTPSender {
    public let profile: SRTPProtectionProfile
    private let session: OpaquePointer

    /// - Parameters:
    ///   - key: our write key (``SRTPKeyingMaterial/writeKey(of:)`` of our DTLS role).
    ///   - allowRepeatedSend: let the same RTP sequence number be protected again, for plain (non-RTX) NACK
    ///     retransmission (libsrtp's `allow_repeat_tx`). The packet must then be byte-identical to the first
    ///     time: the same index with other bytes reuses the keystream (RFC 3711 §9.1; fatal for GCM,
    ///     RFC 7714 §8.4). Off, a repeated sequence number fails with ``SRTPError/replayed``.
    /// - Throws: ``SRTPError/invalidKey(_:)``, or ``SRTPError/library(code:name:)`` when libsrtp refuses.
    public init(key: SRTPMasterKey, allowRepeatedSend: Bool = true) throws(SRTPError) {
        profile = key.profile
        session = try SRTPPolicy.createSession(key: key, inbound: false, allowRepeatedSend: allowRepeatedSend, replayWindow: 0)
    }

    deinit { srtp_dealloc(session) }

    /// Encrypts and authenticates the RTP packet in `buffer[0..<length]` in place and returns the new length
    /// (`length + profile.rtpOverhead`).
    /// - Throws: ``SRTPError/bufferTooSmall(needed:capacity:)``, ``SRTPError/malformedPacket`` (not an RTP
    ///   v2 header, RFC 3550 §5.1), ``SRTPError/replayed`` (sequence number reused with repeats off).
    public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try SRTPPolicy.checkRoom(buffer, length: length, overhead: profile.rtpOverhead)
        guard SRTPPolicy.rtpHeaderLength(buffer, length: length) != nil else { throw .malformedPacket }
        var size = Int32(length)
        try SRTPPolicy.check(srtp_protect(session, buffer.baseAddress, &size))
        return Int(size)
    }

    /// Protects the RTCP compound packet in `buffer[0..<length]` in place (RFC 3711 §3.4: encrypted, the
    /// E flag and SRTCP index appended, then the tag) and returns the new length
    /// (`length + profile.rtcpOverhead`).
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try SRTPPolicy.checkRoom(buffer, length: length, overhead: profile.rtcpOverhead)
        guard SRTPPolicy.isRTCP(buffer, length: length) else { throw .malformedPacket }
        var size = Int32(length)
        try SRTPPolicy.check(srtp_protect_rtcp(session, buffer.baseAddress, &size))
        return Int(size)
    }

    /// ``protectRTP(_:length:)`` on an array, which grows by the overhead (no reallocation when its capacity
    /// already allows). On failure the array is unchanged.
    public func protectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        try SRTPPolicy.grow(&packet, by: profile.rtpOverhead) { buffer, length throws(SRTPError) in
            try protectRTP(buffer, length: length)
        }
    }

    /// ``protectRTCP(_:length:)`` on an array.
    public func protectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        try SRTPPolicy.grow(&packet, by: profile.rtcpOverhead) { buffer, length throws(SRTPError) in
            try protectRTCP(buffer, length: length)
        }
    }
}

/// Checks and decrypts the peer's incoming SRTP and SRTCP with its write key (RFC 3711 §3.3), with replay
/// protection (RFC 3711 §3.3.2: a sliding window, libsrtp's default of 128 packets unless given).
///
/// One libsrtp session for every SSRC the peer sends (`ssrc_any_inbound`: a stream is created for an SSRC
/// only once one of its packets authenticates). Not thread-safe: the receiving thread owns it.
public final class SRTPReceiver {
    public let profile: SRTPProtectionProfile
    private let session: OpaquePointer

    /// - Parameters:
    ///   - key: the peer's write key (``SRTPKeyingMaterial/writeKey(of:)`` of the peer's DTLS role).
    ///   - replayWindow: SRTP replay window in packets, 64…32767 (libsrtp's default 128 when nil). SRTCP's
    ///     window is libsrtp's fixed 128.
    public init(key: SRTPMasterKey, replayWindow: Int? = nil) throws(SRTPError) {
        if let replayWindow, !(64..<0x8000).contains(replayWindow) {
            throw .invalidConfiguration("SRTP replay window must be 64–32767 packets")
        }
        profile = key.profile
        session = try SRTPPolicy.createSession(
            key: key, inbound: true, allowRepeatedSend: false, replayWindow: replayWindow ?? 0)
    }

    deinit { srtp_dealloc(session) }

    /// Authenticates and decrypts the SRTP packet in `buffer[0..<length]` in place; returns the RTP packet's
    /// length. `buffer` needs no room beyond `length`.
    /// - Throws: ``SRTPError/authenticationFailed``, ``SRTPError/replayed``, ``SRTPError/malformedPacket``.
    public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= 0, length <= buffer.count,
              let header = SRTPPolicy.rtpHeaderLength(buffer, length: length), header + profile.rtpOverhead <= length
        else { throw .malformedPacket }
        var size = Int32(length)
        try SRTPPolicy.check(srtp_unprotect(session, buffer.baseAddress, &size))
        return Int(size)
    }

    /// Authenticates and decrypts the SRTCP packet in `buffer[0..<length]` in place; returns the RTCP
    /// compound packet's length.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        guard length >= 0, length <= buffer.count, length >= 8 + profile.rtcpOverhead,
              SRTPPolicy.isRTCP(buffer, length: length)
        else { throw .malformedPacket }
        var size = Int32(length)
        try SRTPPolicy.check(srtp_unprotect_rtcp(session, buffer.baseAddress, &size))
        return Int(size)
    }

    /// ``unprotectRTP(_:length:)`` on an array, which shrinks to the RTP packet. On failure it is unchanged
    /// in length (its bytes may not be: libsrtp may have decrypted in place before a GCM tag failed).
    public func unprotectRTP(_ packet: inout [UInt8]) throws(SRTPError) {
        let length = packet.count
        let result = packet.withUnsafeMutableBytes { buffer in
            Result { () throws(SRTPError) in try unprotectRTP(buffer, length: length) }
        }
        packet.removeLast(length - (try result.get()))
    }

    /// ``unprotectRTCP(_:length:)`` on an array.
    public func unprotectRTCP(_ packet: inout [UInt8]) throws(SRTPError) {
        let length = packet.count
        let result = packet.withUnsafeMutableBytes { buffer in
            Result { () throws(SRTPError) in try unprotectRTCP(buffer, length: length) }
        }
        packet.removeLast(length - (try result.get()))
    }
}
