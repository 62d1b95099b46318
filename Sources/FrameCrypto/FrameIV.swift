internal import COpenSSL

/// A 96-bit AES-GCM IV as our encryptor builds it: NIST SP 800-38D §8.2.1's deterministic construction, a
/// fixed field and an invocation counter, both big-endian:
///
/// ```
///  0                               8               12
/// +-------------------------------+---------------+
/// | prefix: 64 random bits, drawn | counter: 0, 1, |
/// | when a key is installed       | 2, … per frame |
/// +-------------------------------+---------------+
/// ```
/// Nothing in it depends on the SSRC or the RTP timestamp: the frame is encrypted once, before it is fanned
/// out to every viewer with their own SSRC. Under one prefix the counter never repeats; before it could wrap
/// (2³² frames, 2.3 years at 60 fps) the encryptor draws a fresh prefix (``FrameIVSequence``). The key of a
/// passphrase is the same after a restart, so uniqueness across runs rests on the random prefix: the chance
/// that any two of n installs of one key share a prefix is below n²/2⁶⁵ (under 3·10⁻⁸ for a million
/// restarts and rotations). The IV travels in every frame's trailer, so receivers need not know the scheme.
public struct FrameIV: Sendable, Equatable, CustomStringConvertible {
    /// Bytes 0…7, big-endian.
    public var prefix: UInt64
    /// Bytes 8…11, big-endian.
    public var counter: UInt32

    public init(prefix: UInt64, counter: UInt32) {
        self.prefix = prefix
        self.counter = counter
    }

    /// The IV of 12 given bytes (any IV: the known-answer vectors use WebCrypto's).
    /// - Throws: ``FrameCryptoError/unsupportedIVLength(_:)`` unless exactly 12 bytes.
    public init(bytes: [UInt8]) throws(FrameCryptoError) {
        guard bytes.count == FrameCryptorFormat.ivLength else { throw .unsupportedIVLength(bytes.count) }
        prefix = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        counter = bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The 12 bytes.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 12) { buffer, count in
            write(to: buffer.baseAddress!)
            count = 12
        }
    }

    /// Writes the 12 bytes at `destination`.
    @inline(__always)
    func write(to destination: UnsafeMutablePointer<UInt8>) {
        for index in 0..<8 { destination[index] = UInt8(truncatingIfNeeded: prefix >> (56 - 8 * index)) }
        for index in 0..<4 { destination[8 + index] = UInt8(truncatingIfNeeded: counter >> (24 - 8 * index)) }
    }

    public var description: String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    /// 64 bits from OpenSSL's CSPRNG (`RAND_bytes`).
    /// - Throws: ``FrameCryptoError/openSSL(function:detail:)`` when the generator is not seeded.
    public static func randomPrefix() throws(FrameCryptoError) -> UInt64 {
        var bytes = [UInt8](repeating: 0, count: 8)
        ERR_clear_error()
        guard RAND_bytes(&bytes, 8) == 1 else { throw .openSSL(function: "RAND_bytes", detail: OpenSSLFailure.firstEntry()) }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// The IVs of one prefix, in order: counter 0, 1, … up to 2³² − 1, then none (the encryptor draws a new
/// prefix). Sans-I/O: the prefix is given.
public struct FrameIVSequence: Sendable, Equatable {
    public let prefix: UInt64
    /// The counter the next IV gets; nil once all 2³² are used.
    public private(set) var nextCounter: UInt32?

    /// IVs under `prefix` from `firstCounter` on (tests start near the end to see the change of prefix).
    public init(prefix: UInt64, firstCounter: UInt32 = 0) {
        self.prefix = prefix
        nextCounter = firstCounter
    }

    /// The next IV, or nil when this prefix is used up.
    public mutating func next() -> FrameIV? {
        guard let counter = nextCounter else { return nil }
        nextCounter = counter == .max ? nil : counter + 1
        return FrameIV(prefix: prefix, counter: counter)
    }
}
