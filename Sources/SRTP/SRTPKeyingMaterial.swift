/// The SRTP protection profiles we negotiate in DTLS `use_srtp` (RFC 5764 §4.1.2, RFC 7714 §14.2), most
/// preferred first.
public enum SRTPProtectionProfile: UInt16, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// `SRTP_AEAD_AES_128_GCM` (RFC 7714): AES-128-GCM, 16-byte tag; master key 16 bytes, salt 12.
    case aeadAES128GCM = 0x0007
    /// `SRTP_AES128_CM_HMAC_SHA1_80` (RFC 5764 §4.1.2): AES-128 counter mode, HMAC-SHA1 tag of 10 bytes;
    /// master key 16 bytes, salt 14.
    case aes128CMHMACSHA1_80 = 0x0001

    /// OpenSSL's name, as `SSL_CTX_set_tlsext_use_srtp` takes it.
    public var openSSLName: String {
        switch self {
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        case .aes128CMHMACSHA1_80: "SRTP_AES128_CM_SHA1_80"
        }
    }

    /// SRTPSecurityParams.master_key_len (bytes).
    public var masterKeyLength: Int { 16 }
    /// SRTPSecurityParams.master_salt_len (bytes): 12 for AEAD (RFC 7714 §12), 14 for AES-CM (RFC 3711 §8.2).
    public var masterSaltLength: Int {
        switch self {
        case .aeadAES128GCM: 12
        case .aes128CMHMACSHA1_80: 14
        }
    }

    /// Bytes `protectRTP` appends: the authentication tag (RFC 7714 §8.2: 16; RFC 3711 §4.2: 10).
    public var rtpOverhead: Int {
        switch self {
        case .aeadAES128GCM: 16
        case .aes128CMHMACSHA1_80: 10
        }
    }

    /// Bytes `protectRTCP` appends: the tag and the E flag with the 31-bit SRTCP index (4 bytes; before the
    /// tag for AES-CM, RFC 3711 §3.4; after it for AEAD, RFC 7714 §9.1).
    public var rtcpOverhead: Int { rtpOverhead + 4 }

    public var description: String { openSSLName }
}

/// One direction's SRTP master key and salt: what its sender protects with and its receiver checks with.
public struct SRTPMasterKey: Sendable, Equatable, CustomStringConvertible {
    public var profile: SRTPProtectionProfile
    public var key: [UInt8]
    public var salt: [UInt8]

    public init(profile: SRTPProtectionProfile, key: [UInt8], salt: [UInt8]) {
        self.profile = profile
        self.key = key
        self.salt = salt
    }

    /// Key and salt lengths fit the profile.
    func validate() throws(SRTPError) {
        guard key.count == profile.masterKeyLength, salt.count == profile.masterSaltLength else {
            throw .invalidKey(
                "\(profile) needs a \(profile.masterKeyLength)-byte key and \(profile.masterSaltLength)-byte salt, "
                    + "got \(key.count) and \(salt.count)")
        }
    }

    /// Never prints key bytes (this lands in logs).
    public var description: String { "SRTPMasterKey(\(profile), \(key.count)+\(salt.count) bytes)" }
}

/// The SRTP keys a DTLS-SRTP handshake exported (RFC 5764 §4.2): one master key and salt per direction.
///
/// ```
///   EXTRACTOR-dtls_srtp output (2 * (key length + salt length) bytes):
///   +------------------------+------------------------+-------------------+-------------------+
///   | client_write_SRTP_     | server_write_SRTP_     | client_write_SRTP_| server_write_SRTP_|
///   | master_key[16]         | master_key[16]         | master_salt[s]    | master_salt[s]    |
///   +------------------------+------------------------+-------------------+-------------------+
///   s = 12 (AEAD_AES_128_GCM, RFC 7714 §12) or 14 (AES128_CM_HMAC_SHA1_80)
/// ```
public struct SRTPKeyingMaterial: Sendable, Equatable, CustomStringConvertible {
    public var profile: SRTPProtectionProfile
    /// What the DTLS client protects with (and the server unprotects with).
    public var clientWrite: SRTPMasterKey
    /// What the DTLS server protects with (and the client unprotects with).
    public var serverWrite: SRTPMasterKey

    public init(profile: SRTPProtectionProfile, clientWrite: SRTPMasterKey, serverWrite: SRTPMasterKey) {
        self.profile = profile
        self.clientWrite = clientWrite
        self.serverWrite = serverWrite
    }

    /// Splits exporter output laid out as above.
    /// - Throws: ``SRTPError/invalidKey(_:)`` when `exported` has the wrong length for `profile`.
    public init(profile: SRTPProtectionProfile, exported: [UInt8]) throws(SRTPError) {
        let keyLength = profile.masterKeyLength, saltLength = profile.masterSaltLength
        guard exported.count == Self.exportLength(profile) else {
            throw .invalidKey("\(profile) exports \(Self.exportLength(profile)) bytes, got \(exported.count)")
        }
        let clientKey = Array(exported[0..<keyLength])
        let serverKey = Array(exported[keyLength..<2 * keyLength])
        let clientSalt = Array(exported[2 * keyLength..<2 * keyLength + saltLength])
        let serverSalt = Array(exported[(2 * keyLength + saltLength)...])
        self.init(
            profile: profile, clientWrite: SRTPMasterKey(profile: profile, key: clientKey, salt: clientSalt),
            serverWrite: SRTPMasterKey(profile: profile, key: serverKey, salt: serverSalt))
    }

    /// Bytes to ask the exporter for: 2 × (key + salt).
    public static func exportLength(_ profile: SRTPProtectionProfile) -> Int {
        2 * (profile.masterKeyLength + profile.masterSaltLength)
    }

    /// Never prints key bytes.
    public var description: String { "SRTPKeyingMaterial(\(profile))" }
}
