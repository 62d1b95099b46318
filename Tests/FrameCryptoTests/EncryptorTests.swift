import FrameCrypto
import TestSupport
import XCTest

/// Our encryptor: round trips, its IV sequence (unique, with a fresh prefix before the counter wraps), and
/// the limits it refuses with typed errors.
final class EncryptorTests: XCTestCase {
    private let key = try! FrameKey(raw: Array(0..<16))

    /// IV prefixes from a list, as a random source would give them.
    private final class Prefixes {
        var values: [UInt64]
        init(_ values: [UInt64]) { self.values = values }
        func next() throws(FrameCryptoError) -> UInt64 { values.removeFirst() }
    }

    private func frame(keyframe: Bool, count: Int, using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[0] = keyframe ? bytes[0] & 0xFE : bytes[0] | 1
        return bytes
    }

    func testRoundTripOfFramesOfManySizes() throws {
        var generator = SeededGenerator(seed: 14)
        let encryptor = try FrameEncryptor(key: key, keyIndex: 5)
        let decryptor = FrameDecryptor()
        try decryptor.setKey(key, at: 5)
        for (keyframe, count) in [(false, 3), (false, 4), (true, 10), (true, 11), (false, 1200), (true, 65_537), (false, 300_001)] {
            let plain = frame(keyframe: keyframe, count: count, using: &generator)
            let sealed = try encryptor.encrypt(plain)
            XCTAssertEqual(sealed.count, count + 30)
            XCTAssertEqual(Array(sealed.prefix(keyframe ? 10 : 3)), Array(plain.prefix(keyframe ? 10 : 3)))
            XCTAssertEqual(sealed[sealed.count - 2], 12)
            XCTAssertEqual(sealed[sealed.count - 1], 5)
            XCTAssertEqual(try decryptor.decrypt(sealed), plain, "\(count) bytes")
        }
        XCTAssertEqual(encryptor.framesEncrypted, 7)
    }

    /// An Opus packet keeps its TOC byte (RFC 6716 §3.1) clear, whatever its bit 0 (which would say "VP8 delta
    /// frame": 3 clear bytes), the rest is ciphertext, and it decrypts as Opus; read as VP8 it does not
    /// authenticate (the additional data differs). A 1-byte packet (a DTX frame) is all clear prefix.
    func testOpusPacketsKeepOnlyTheirTOCByteClearAndRoundTrip() throws {
        var generator = SeededGenerator(seed: 28)
        let encryptor = try FrameEncryptor(key: key, keyIndex: 2)
        let decryptor = FrameDecryptor()
        try decryptor.setKey(key, at: 2)
        for (toc, count) in [(UInt8(0x78), 1), (0x78, 3), (0x79, 80), (0xFC, 160), (0x01, 1275)] {
            var plain = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            plain[0] = toc
            let sealed = try encryptor.encrypt(plain, media: .opus)
            XCTAssertEqual(sealed.count, count + FrameCryptorFormat.overhead)
            XCTAssertEqual(sealed[0], toc, "the TOC byte is clear")
            if count > 4 {
                XCTAssertNotEqual(Array(sealed[1..<count]), Array(plain[1...]), "the rest is not")
            }
            XCTAssertEqual(Array(sealed.suffix(2)), [12, 2])
            let layout = try EncryptedFrameLayout(parsing: sealed, media: .opus)
            XCTAssertEqual(layout.clearLength, 1)
            XCTAssertEqual(layout.plainLength, count)
            XCTAssertFalse(layout.isKeyframe)
            XCTAssertEqual(try decryptor.decrypt(sealed, media: .opus), plain, "\(count) bytes")
            if count >= 3 { XCTAssertThrowsError(try decryptor.decrypt(sealed), "read as VP8") }
            var tampered = sealed
            tampered[0] ^= 0x04
            XCTAssertThrowsError(try decryptor.decrypt(tampered, media: .opus), "the TOC byte is authenticated") { error in
                XCTAssertEqual(error as? FrameCryptoError, .authenticationFailed(keyIndex: 2))
            }
        }
        XCTAssertThrowsError(try encryptor.encrypt([], media: .opus)) { XCTAssertEqual($0 as? FrameCryptoError, .emptyFrame) }
        XCTAssertThrowsError(try decryptor.decrypt(Array(repeating: 12, count: 30), media: .opus)) {
            XCTAssertEqual($0 as? FrameCryptoError, .frameTooShort(bytes: 30, needed: 31))
        }
    }

    func testAES256KeysWork() throws {
        let key = try FrameKey(raw: Array(repeating: 0xA5, count: 32))
        XCTAssertEqual(key.bits, 256)
        let decryptor = FrameDecryptor()
        try decryptor.setKey(key, at: 0)
        let plain: [UInt8] = [0x00, 1, 2, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0x68, 0x01, 42, 43, 44]
        XCTAssertEqual(try decryptor.decrypt(try FrameEncryptor(key: key, keyIndex: 0).encrypt(plain)), plain)
        try decryptor.setKey(self.key, at: 0)
        XCTAssertThrowsError(try decryptor.decrypt(try FrameEncryptor(key: key, keyIndex: 0).encrypt(plain)))
    }

    /// IVs are prefix ‖ counter, counting from 0 per frame; two encryptors of one key never share an IV
    /// because each draws its own prefix.
    func testIVsArePrefixAndCounter() throws {
        let prefixes = Prefixes([0x0102_0304_0506_0708, 0xFFFF_0000_FFFF_0000])
        let first = try FrameEncryptor(key: key, keyIndex: 0, drawPrefix: prefixes.next)
        let second = try FrameEncryptor(key: key, keyIndex: 1, drawPrefix: prefixes.next)
        var seen = Set<[UInt8]>()
        for counter in 0..<50 {
            for encryptor in [first, second] {
                let sealed = try encryptor.encrypt([0x01, 0x02, 0x03, UInt8(counter)])
                let iv = Array(sealed.suffix(14).prefix(12))
                XCTAssertTrue(seen.insert(iv).inserted)
                XCTAssertEqual(Array(iv.suffix(4)), [0, 0, 0, UInt8(counter)])
            }
        }
        XCTAssertEqual(try first.nextIV(), FrameIV(prefix: 0x0102_0304_0506_0708, counter: 50))
        XCTAssertEqual(FrameIV(prefix: 0x0102_0304_0506_0708, counter: 50).bytes, [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 50])
        XCTAssertEqual(try FrameIV(bytes: [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 50]), FrameIV(prefix: 0x0102_0304_0506_0708, counter: 50))
    }

    /// The last counter of a prefix is used once; the frame after it gets a freshly drawn prefix at counter 0.
    func testANewPrefixBeforeTheCounterWraps() throws {
        let prefixes = Prefixes([7, 9])
        let encryptor = try FrameEncryptor(key: key, keyIndex: 0, drawPrefix: prefixes.next, firstCounter: .max - 1)
        XCTAssertEqual(try encryptor.nextIV(), FrameIV(prefix: 7, counter: .max - 1))
        XCTAssertEqual(try encryptor.nextIV(), FrameIV(prefix: 7, counter: .max))
        XCTAssertEqual(encryptor.prefixesDrawn, 1)
        XCTAssertEqual(try encryptor.nextIV(), FrameIV(prefix: 9, counter: 0))
        XCTAssertEqual(encryptor.prefixesDrawn, 2)
        var sequence = FrameIVSequence(prefix: 1, firstCounter: .max)
        XCTAssertEqual(sequence.next(), FrameIV(prefix: 1, counter: .max))
        XCTAssertNil(sequence.next())
        XCTAssertNil(sequence.next())
    }

    /// Without a given source, prefixes come from OpenSSL's generator: two encryptors differ.
    func testRandomPrefixesDiffer() throws {
        let a = try FrameEncryptor(key: key, keyIndex: 0).nextIV(), b = try FrameEncryptor(key: key, keyIndex: 0).nextIV()
        XCTAssertNotEqual(a.prefix, b.prefix)
        XCTAssertEqual(a.counter, 0)
    }

    func testLimitsAreTypedErrors() throws {
        let encryptor = try FrameEncryptor(key: key, keyIndex: 15)
        XCTAssertThrowsError(try encryptor.encrypt([])) { XCTAssertEqual($0 as? FrameCryptoError, .emptyFrame) }
        XCTAssertThrowsError(try encryptor.encrypt([0x00, 0, 0, 0x9D])) {
            XCTAssertEqual($0 as? FrameCryptoError, .vp8FrameTooShort(bytes: 4, clearLength: 10))
        }
        XCTAssertThrowsError(try encryptor.encrypt([0x01, 0])) {
            XCTAssertEqual($0 as? FrameCryptoError, .vp8FrameTooShort(bytes: 2, clearLength: 3))
        }
        let huge = [UInt8](repeating: 1, count: FrameCryptorFormat.maximumFrameBytes + 1)
        XCTAssertThrowsError(try encryptor.encrypt(huge)) {
            XCTAssertEqual($0 as? FrameCryptoError, .frameTooLarge(bytes: huge.count, limit: FrameCryptorFormat.maximumFrameBytes))
        }
        XCTAssertEqual(encryptor.framesEncrypted, 0, "refused frames are not counted")
        for index in [-1, 16] {
            XCTAssertThrowsError(try FrameEncryptor(key: key, keyIndex: index)) { XCTAssertEqual($0 as? FrameCryptoError, .keyIndexOutOfRange(index)) }
            XCTAssertThrowsError(try FrameDecryptor().setKey(key, at: index)) { XCTAssertEqual($0 as? FrameCryptoError, .keyIndexOutOfRange(index)) }
        }
        XCTAssertThrowsError(try FrameIV(bytes: Array(repeating: 0, count: 11))) { XCTAssertEqual($0 as? FrameCryptoError, .unsupportedIVLength(11)) }
    }

    func testKeyLimitsAndNoKeyInDescriptions() throws {
        for length in [0, 15, 17, 24, 33] {
            XCTAssertThrowsError(try FrameKey(raw: Array(repeating: 1, count: length))) {
                XCTAssertEqual($0 as? FrameCryptoError, .unsupportedKeyLength(length))
            }
        }
        XCTAssertThrowsError(try FrameKey.derive(passphrase: "")) { XCTAssertEqual($0 as? FrameCryptoError, .emptyPassphrase) }
        XCTAssertThrowsError(try FrameKey.derive(passphrase: "p", salt: "")) { XCTAssertEqual($0 as? FrameCryptoError, .emptySalt) }
        XCTAssertThrowsError(try FrameKey.derive(passphrase: "p", iterations: 0)) { XCTAssertEqual($0 as? FrameCryptoError, .iterationsOutOfRange(0)) }
        let derived = try FrameKey.derive(passphrase: "secret", iterations: 1)
        let hex = derived.rawBytes.map { String(format: "%02x", $0) }.joined()
        XCTAssertFalse("\(derived)".contains(hex))
        XCTAssertFalse(String(reflecting: derived).contains(hex))
        var dumped = ""
        dump(derived, to: &dumped)
        XCTAssertFalse(dumped.contains("rawBytes"), dumped)
        XCTAssertEqual("\(derived)", "FrameKey(AES-128-GCM, bytes withheld)")
    }
}
