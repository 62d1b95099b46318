/// The webrtc-sdk FrameCryptor frame format (what iOS `RTCFrameCryptor`, flutter-webrtc and LiveKit's
/// native and JS SDKs read and write), for VP8: one encoded frame in, one frame out, before RTP
/// packetization (so RFC 7741 packetizes it like any VP8 frame).
///
/// ```
///  0                   clearLength                                              end
/// +-------------------+---------------------------+-----------+-----------+-----+-----+
/// | clear VP8 header  | AES-GCM ciphertext of the | GCM tag   | IV        | ivL | kI  |
/// | 10 B (keyframe)   | rest of the VP8 frame     | 16 B      | 12 B      | 1 B | 1 B |
/// | 3 B (delta frame) | (same length)             |           |           | =12 |0…15 |
/// +-------------------+---------------------------+-----------+-----------+-----+-----+
///   └─ AES-GCM additional data (authenticated, not encrypted)
/// ```
/// The clear header is the VP8 frame tag (RFC 6386 §9.1: 3 bytes; P, bit 0 of byte 0, is 0 on a keyframe)
/// and, on keyframes, the start code `9d 01 2a` and the 14-bit width and height (4 bytes): enough for an SFU
/// or an RTP receiver to see keyframes and the picture size, nothing of the picture. The IV travels in the
/// frame, so any unique IV works (see ``FrameIV`` for ours); `ivL` is the IV's length and `kI` the index of
/// the key in the receiver's key ring.
public enum FrameCryptorFormat {
    /// Bytes of the AES-GCM tag (128 bits).
    public static let tagLength = 16
    /// Bytes of the IV; the only `ivLength` readers accept.
    public static let ivLength = 12
    /// The trailer after the tag: IV, `ivLength`, key index.
    public static let trailerLength = ivLength + 2
    /// Bytes added to a frame by encryption: tag and trailer (30).
    public static let overhead = tagLength + trailerLength
    /// Clear bytes of a VP8 keyframe: frame tag, start code, width and height (RFC 6386 §9.1).
    public static let keyframeClearLength = 10
    /// Clear bytes of a VP8 delta frame: the frame tag (RFC 6386 §9.1).
    public static let deltaFrameClearLength = 3
    /// Clear bytes of an Opus packet: its TOC byte (RFC 6716 §3.1), as the webrtc-sdk and LiveKit's
    /// `UNENCRYPTED_BYTES` leave audio frames.
    public static let opusClearLength = 1
    /// The largest VP8 frame accepted for encryption, bytes (OpenSSL lengths are `int`; a 4K keyframe is a
    /// few MB).
    public static let maximumFrameBytes = 64 << 20

    /// Clear header bytes of a VP8 frame whose first byte is `first`: 10 when P (bit 0) is 0 — a keyframe —
    /// else 3 (RFC 6386 §9.1).
    @inline(__always)
    public static func clearLength(firstByte first: UInt8) -> Int {
        first & 0x01 == 0 ? keyframeClearLength : deltaFrameClearLength
    }
}

/// What a frame of the FrameCryptor format holds, which decides its clear prefix: a VP8 frame keeps its
/// header clear (10 bytes on keyframes, 3 on delta frames; RFC 6386 §9.1), an Opus packet its TOC byte
/// (1 byte; RFC 6716 §3.1). The rest of the layout (ciphertext, tag, IV, `ivL`, `kI`) is the same.
public enum FrameCryptorMedia: Sendable, Equatable {
    /// A complete VP8 frame (RFC 6386).
    case vp8
    /// One Opus packet (RFC 6716 §3), audio.
    case opus

    /// Clear prefix bytes of a frame whose first byte is `first`.
    @inline(__always)
    public func clearLength(firstByte first: UInt8) -> Int {
        switch self {
        case .vp8: FrameCryptorFormat.clearLength(firstByte: first)
        case .opus: FrameCryptorFormat.opusClearLength
        }
    }
}

/// Where the parts of an encrypted frame lie, read from its last bytes and its first byte (nothing is
/// decrypted). Offsets are from the frame's start.
public struct EncryptedFrameLayout: Sendable, Equatable {
    /// Bytes of the clear prefix (VP8: 10 on keyframes, 3 on delta frames; Opus: 1).
    public var clearLength: Int
    /// Bytes of ciphertext (the encrypted rest of the VP8 frame; may be 0).
    public var ciphertextLength: Int
    /// The trailer's key index, 0…255 as written (the key ring holds 0…15).
    public var keyIndex: Int
    /// True when the clear header says keyframe (VP8 only; never for Opus).
    public var isKeyframe: Bool { clearLength == FrameCryptorFormat.keyframeClearLength }

    /// Offset of the tag.
    public var tagOffset: Int { clearLength + ciphertextLength }
    /// Offset of the IV.
    public var ivOffset: Int { tagOffset + FrameCryptorFormat.tagLength }
    /// Total bytes of the encrypted frame.
    public var frameLength: Int { ivOffset + FrameCryptorFormat.trailerLength }
    /// Bytes of the VP8 frame or Opus packet once decrypted.
    public var plainLength: Int { clearLength + ciphertextLength }

    /// Reads the layout of an encrypted frame of `media` (VP8 unless told).
    /// - Throws: ``FrameCryptoError/frameTooShort(bytes:needed:)`` below the clear header + 30 bytes (the
    ///   length needed is known once the first byte is), ``FrameCryptoError/unsupportedIVLength(_:)`` when
    ///   the `ivLength` byte is not 12. The key index is not checked here (the key ring does that).
    public init(parsing frame: some RandomAccessCollection<UInt8>, media: FrameCryptorMedia = .vp8) throws(FrameCryptoError) {
        guard let first = frame.first else {
            throw .frameTooShort(bytes: 0, needed: media.clearLength(firstByte: 0x01) + FrameCryptorFormat.overhead)
        }
        let clear = media.clearLength(firstByte: first)
        let needed = clear + FrameCryptorFormat.overhead
        guard frame.count >= needed else { throw .frameTooShort(bytes: frame.count, needed: needed) }
        let end = frame.endIndex
        let ivLength = Int(frame[frame.index(end, offsetBy: -2)])
        guard ivLength == FrameCryptorFormat.ivLength else { throw .unsupportedIVLength(ivLength) }
        clearLength = clear
        ciphertextLength = frame.count - needed
        keyIndex = Int(frame[frame.index(end, offsetBy: -1)])
    }
}
