internal import CSRTP

/// libsrtp plumbing shared by ``SRTPSender`` and ``SRTPReceiver``: one-time library initialization,
/// policies, status codes, and the header checks made before libsrtp sees a packet.
enum SRTPPolicy {
    /// `srtp_init` runs once per process: a lazy static is initialized exactly once, thread-safely.
    private static let initialization: UInt32 = srtp_init().rawValue

    /// A libsrtp session keyed by `key` for every SSRC of one direction.
    static func createSession(
        key: SRTPMasterKey, inbound: Bool, allowRepeatedSend: Bool, replayWindow: Int
    ) throws(SRTPError) -> OpaquePointer {
        try key.validate()
        try check(srtp_err_status_t(rawValue: initialization))
        var policy = srtp_policy_t()
        switch key.profile {
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        case .aes128CMHMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        }
        csrtp_policy_set_any_ssrc(&policy, inbound ? 1 : 0)
        policy.window_size = UInt(replayWindow)
        policy.allow_repeat_tx = allowRepeatedSend ? 1 : 0
        policy.next = nil
        var material = key.key + key.salt  // libsrtp takes key ‖ salt and copies what it derives from it
        var session: OpaquePointer?
        let status = material.withUnsafeMutableBufferPointer { bytes in
            policy.key = bytes.baseAddress
            return srtp_create(&session, &policy)
        }
        material.withUnsafeMutableBufferPointer { bytes in bytes.update(repeating: 0) }  // best effort: `key` keeps its copy
        try check(status)
        guard let session else { throw .library(code: 0, name: "srtp_create returned no session") }
        return session
    }

    /// Maps a libsrtp status to a typed error (nothing for `srtp_err_status_ok`).
    @inline(__always)
    static func check(_ status: srtp_err_status_t) throws(SRTPError) {
        guard status != srtp_err_status_ok else { return }
        throw failure(status)
    }

    static func failure(_ status: srtp_err_status_t) -> SRTPError {
        switch status {
        case srtp_err_status_auth_fail: .authenticationFailed
        // GCM reports a tag mismatch from the cipher.
        case srtp_err_status_cipher_fail: .authenticationFailed
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: .replayed
        case srtp_err_status_parse_err, srtp_err_status_bad_param: .malformedPacket
        // SRTCP whose trailer lacks the E flag while the profile encrypts (RFC 3711 §3.4): what arrived is
        // not a packet this context makes, so it is the sender's fault, not ours.
        case srtp_err_status_cant_check: .malformedPacket
        default: .library(code: Int32(status.rawValue), name: name(status))
        }
    }

    private static func name(_ status: srtp_err_status_t) -> String {
        let names = [
            "ok", "fail", "bad_param", "alloc_fail", "dealloc_fail", "init_fail", "terminus", "auth_fail",
            "cipher_fail", "replay_fail", "replay_old", "algo_fail", "no_such_op", "no_ctx", "cant_check",
            "key_expired", "socket_err", "signal_err", "nonce_bad", "read_fail", "write_fail", "parse_err",
            "encode_err", "semaphore_err", "pfkey_err", "bad_mki", "pkt_idx_old", "pkt_idx_adv",
        ]
        let code = Int(status.rawValue)
        return code < names.count ? "srtp_err_status_" + names[code] : "unknown"
    }

    /// Throws unless `buffer` holds `length` bytes plus `overhead` more.
    static func checkRoom(_ buffer: UnsafeMutableRawBufferPointer, length: Int, overhead: Int) throws(SRTPError) {
        guard length >= 0, length <= Int(Int32.max) - overhead else { throw .malformedPacket }
        guard buffer.count >= length + overhead else {
            throw .bufferTooSmall(needed: length + overhead, capacity: buffer.count)
        }
    }

    /// The RTP header's length (fixed part, CSRCs, extension; RFC 3550 §5.1, §5.3.1) when `buffer[0..<length]`
    /// starts with a complete version-2 header; nil otherwise.
    ///
    /// ```
    ///  0                   1                   2                   3
    ///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    /// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    /// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
    /// |                           timestamp                           |
    /// |           synchronization source (SSRC) identifier            |
    /// |            contributing source (CSRC) identifiers (CC × 32)   |
    /// |      defined by profile       |    extension length (words)   |  (X = 1)
    /// ```
    static func rtpHeaderLength(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Int? {
        guard length >= 12, length <= buffer.count else { return nil }
        let first = buffer[0]
        guard first >> 6 == 2 else { return nil }
        var header = 12 + 4 * Int(first & 0x0F)
        if first & 0x10 != 0 {
            guard header + 4 <= length else { return nil }
            header += 4 + 4 * (Int(buffer[header + 2]) << 8 | Int(buffer[header + 3]))
        }
        return header <= length ? header : nil
    }

    /// True when `buffer[0..<length]` starts like an RTCP packet: version 2, at least the 8-byte header
    /// with the sender's SSRC (RFC 3550 §6.4).
    static func isRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool {
        length >= 8 && length <= buffer.count && buffer[0] >> 6 == 2
    }

    /// Grows `packet` by `overhead` bytes, runs `body` on its storage with the original length, and trims to
    /// the length `body` returns; on failure restores the original length.
    static func grow(
        _ packet: inout [UInt8], by overhead: Int,
        _ body: (UnsafeMutableRawBufferPointer, Int) throws(SRTPError) -> Int
    ) throws(SRTPError) {
        let length = packet.count
        packet.append(contentsOf: repeatElement(0, count: overhead))
        let result = packet.withUnsafeMutableBytes { buffer in
            Result { () throws(SRTPError) in try body(buffer, length) }
        }
        switch result {
        case .success(let newLength): packet.removeLast(packet.count - newLength)
        case .failure(let error):
            packet.removeLast(overhead)
            throw error
        }
    }
}
