/// Encrypts VP8 frames and Opus packets into the FrameCryptor format (``FrameCryptorFormat``) under one key and key index.
///
/// IVs come from a ``FrameIVSequence`` with a random 64-bit prefix drawn when the encryptor is made, and a
/// fresh prefix once 2³² frames have used the current one, so no IV repeats under the key (see ``FrameIV``).
/// One keyed OpenSSL context is reused for every frame; the only allocation per frame is the output.
///
/// Not thread-safe: one caller at a time (the call's encoder thread, behind the sink's lock).
public final class FrameEncryptor {
    /// The key index written in every frame's trailer, 0…15.
    public let keyIndex: Int
    /// Frames encrypted so far.
    public private(set) var framesEncrypted: UInt64 = 0
    /// IV prefixes drawn so far (1, plus one per 2³² frames).
    public private(set) var prefixesDrawn = 0

    private let context: GCMContext
    private var sequence: FrameIVSequence
    private let drawPrefix: () throws(FrameCryptoError) -> UInt64

    /// - Parameters:
    ///   - key: the AES-GCM key (``FrameKey/derive(passphrase:salt:iterations:)`` for a passphrase).
    ///   - keyIndex: where receivers keep the key, 0…15.
    ///   - drawPrefix: the source of IV prefixes (default: OpenSSL's CSPRNG); tests pass their own.
    ///   - firstCounter: the first IV's counter (0; tests start near 2³² to see a new prefix drawn).
    /// - Throws: ``FrameCryptoError/keyIndexOutOfRange(_:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    public init(
        key: FrameKey, keyIndex: Int,
        drawPrefix: @escaping () throws(FrameCryptoError) -> UInt64 = FrameIV.randomPrefix, firstCounter: UInt32 = 0
    ) throws(FrameCryptoError) {
        guard FrameKeyRing.indices.contains(keyIndex) else { throw .keyIndexOutOfRange(keyIndex) }
        self.keyIndex = keyIndex
        self.drawPrefix = drawPrefix
        context = try GCMContext(key: key, encrypting: true)
        sequence = FrameIVSequence(prefix: try drawPrefix(), firstCounter: firstCounter)
        prefixesDrawn = 1
    }

    /// The IV the next frame gets (drawing a new prefix when the current one is used up).
    /// - Throws: ``FrameCryptoError/openSSL(function:detail:)`` when no prefix can be drawn.
    public func nextIV() throws(FrameCryptoError) -> FrameIV {
        if let iv = sequence.next() { return iv }
        sequence = FrameIVSequence(prefix: try drawPrefix())
        prefixesDrawn += 1
        return sequence.next()!  // a fresh sequence starts at counter 0
    }

    /// Encrypts one complete VP8 frame (RFC 6386 §9.1: a keyframe when bit 0 of byte 0 is 0) or, with
    /// `media` `.opus`, one Opus packet (its TOC byte clear, RFC 6716 §3.1) with the next IV:
    /// `clear prefix ‖ ciphertext ‖ tag ‖ IV ‖ 12 ‖ keyIndex`, 30 bytes longer than `frame`.
    /// - Throws: ``FrameCryptoError/emptyFrame``, ``FrameCryptoError/vp8FrameTooShort(bytes:clearLength:)``,
    ///   ``FrameCryptoError/frameTooLarge(bytes:limit:)``, ``FrameCryptoError/openSSL(function:detail:)``.
    public func encrypt(_ frame: [UInt8], media: FrameCryptorMedia = .vp8) throws(FrameCryptoError) -> [UInt8] {
        try check(frame, media: media)
        return try seal(frame, media: media, iv: try nextIV())
    }

    /// Encrypts with a given IV, for known-answer tests against other implementations. An IV must never be
    /// used twice under one key: everything else goes through ``encrypt(_:)``.
    public func encrypt(_ frame: [UInt8], media: FrameCryptorMedia = .vp8, iv: FrameIV) throws(FrameCryptoError) -> [UInt8] {
        try check(frame, media: media)
        return try seal(frame, media: media, iv: iv)
    }

    private func check(_ frame: [UInt8], media: FrameCryptorMedia) throws(FrameCryptoError) {
        guard !frame.isEmpty else { throw .emptyFrame }
        guard frame.count <= FrameCryptorFormat.maximumFrameBytes else {
            throw .frameTooLarge(bytes: frame.count, limit: FrameCryptorFormat.maximumFrameBytes)
        }
        let clear = media.clearLength(firstByte: frame[0])
        guard frame.count >= clear else { throw .vp8FrameTooShort(bytes: frame.count, clearLength: clear) }
    }

    private func seal(_ frame: [UInt8], media: FrameCryptorMedia, iv: FrameIV) throws(FrameCryptoError) -> [UInt8] {
        let clear = media.clearLength(firstByte: frame[0])
        let total = frame.count + FrameCryptorFormat.overhead
        var failure: FrameCryptoError?
        let output = frame.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
                let out = buffer.baseAddress!
                let tagAt = out + frame.count, ivAt = tagAt + FrameCryptorFormat.tagLength
                out.initialize(from: input.baseAddress!, count: clear)
                iv.write(to: ivAt)
                ivAt[FrameCryptorFormat.ivLength] = UInt8(FrameCryptorFormat.ivLength)
                ivAt[FrameCryptorFormat.ivLength + 1] = UInt8(keyIndex)
                do throws(FrameCryptoError) {
                    _ = try context.run(
                        iv: UnsafePointer(ivAt), aad: UnsafeBufferPointer(rebasing: input[0..<clear]),
                        input: UnsafeBufferPointer(rebasing: input[clear...]), output: out + clear, tag: tagAt)
                    count = total
                } catch {
                    failure = error
                    count = 0
                }
            }
        }
        if let failure { throw failure }
        framesEncrypted += 1
        return output
    }
}
