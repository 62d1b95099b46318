import FrameCrypto
import XCTest

/// The trailer and clear header of WebCrypto's frames read field by field, and every kind of damage refused
/// with its typed error.
final class TrailerTests: XCTestCase {
    private func decryptor(_ vectors: KnownAnswerVectors) throws -> FrameDecryptor {
        let decryptor = FrameDecryptor()
        try decryptor.setKey(try FrameKey(raw: vectors.key), at: vectors.keyIndex)
        return decryptor
    }

    private func expect(_ error: FrameCryptoError, _ body: () throws -> some Any, _ message: String = "", line: UInt = #line) {
        XCTAssertThrowsError(try body(), message, line: line) { XCTAssertEqual($0 as? FrameCryptoError, error, message, line: line) }
    }

    func testLayoutOfAKeyframeAndADeltaFrame() throws {
        let vectors = try KnownAnswerVectors.load()
        let key = try EncryptedFrameLayout(parsing: vectors.keyframe.encrypted)
        XCTAssertEqual(key.clearLength, 10)
        XCTAssertTrue(key.isKeyframe)
        XCTAssertEqual(key.ciphertextLength, vectors.keyframe.plain.count - 10)
        XCTAssertEqual(key.keyIndex, 2)
        XCTAssertEqual(key.tagOffset, vectors.keyframe.plain.count)
        XCTAssertEqual(key.ivOffset, key.tagOffset + 16)
        XCTAssertEqual(key.frameLength, vectors.keyframe.encrypted.count)
        let delta = try EncryptedFrameLayout(parsing: vectors.deltaFrame.encrypted[...])
        XCTAssertEqual(delta.clearLength, 3)
        XCTAssertFalse(delta.isKeyframe)
        XCTAssertEqual(delta.plainLength, vectors.deltaFrame.plain.count)
        XCTAssertEqual(delta.keyIndex, 2)
    }

    /// The smallest frames: a clear header and the 30 bytes of tag and trailer, nothing encrypted.
    func testShortestFramesAndEveryShorterOne() throws {
        var delta: [UInt8] = [0x01, 0, 0] + [UInt8](repeating: 0, count: 28) + [12, 0]
        XCTAssertEqual(try EncryptedFrameLayout(parsing: delta).ciphertextLength, 0)
        expect(.frameTooShort(bytes: 0, needed: 33)) { try EncryptedFrameLayout(parsing: [UInt8]()) }
        delta.removeFirst(1)  // now byte 0 is 0: a keyframe header needing 40 bytes
        expect(.frameTooShort(bytes: 32, needed: 40)) { try EncryptedFrameLayout(parsing: delta) }
    }

    /// Every truncation of a real frame (from the end, as a lost tail would be) is refused, never read.
    func testEveryTruncationIsRefused() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = try decryptor(vectors)
        for frame in vectors.frames {
            for length in 0..<frame.encrypted.count {
                let cut = Array(frame.encrypted.prefix(length))
                XCTAssertThrowsError(try decryptor.decrypt(cut), "\(frame.name) cut to \(length)") { error in
                    let typed = error as? FrameCryptoError
                    XCTAssertTrue(typed?.isFrameFault == true, "\(frame.name) cut to \(length): \(error)")
                }
            }
        }
    }

    func testIVLengthOtherThan12IsRefused() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = try decryptor(vectors)
        for value in [0, 1, 11, 13, 16, 255] {
            var frame = vectors.deltaFrame.encrypted
            frame[frame.count - 2] = UInt8(value)
            expect(.unsupportedIVLength(value), { try decryptor.decrypt(frame) }, "ivLength \(value)")
        }
    }

    func testKeyIndexWithoutAKeyIsRefused() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = try decryptor(vectors)
        for index in [0, 1, 3, 15, 16, 255] {
            var frame = vectors.keyframe.encrypted
            frame[frame.count - 1] = UInt8(index)
            expect(.unknownKeyIndex(index), { try decryptor.decrypt(frame) }, "key index \(index)")
        }
        decryptor.removeKey(at: vectors.keyIndex)
        XCTAssertFalse(decryptor.hasKey(at: vectors.keyIndex))
        expect(.unknownKeyIndex(2)) { try decryptor.decrypt(vectors.keyframe.encrypted) }
    }

    /// The key index only picks a key: it is not authenticated (the format's choice), so a frame whose index
    /// was moved to another slot with the same key still decrypts; with another key it fails.
    func testKeyIndexSelectsTheKey() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = try decryptor(vectors)
        var frame = vectors.deltaFrame.encrypted
        frame[frame.count - 1] = 7
        try decryptor.setKey(try FrameKey(raw: vectors.key), at: 7)
        XCTAssertEqual(try decryptor.decrypt(frame), vectors.deltaFrame.plain)
        try decryptor.setKey(try FrameKey(raw: vectors.otherSaltKey), at: 7)
        expect(.authenticationFailed(keyIndex: 7)) { try decryptor.decrypt(frame) }
    }

    /// Every bit of the clear header (the AES-GCM additional data) is authenticated: flipping any one fails.
    /// Flipping bit 0 of byte 0 also moves the header's end (keyframe ↔ delta frame).
    func testEveryBitOfTheClearHeaderIsAuthenticated() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = try decryptor(vectors)
        for frame in vectors.frames {
            for byte in 0..<(frame.isKeyframe ? 10 : 3) {
                for bit in 0..<8 {
                    var tampered = frame.encrypted
                    tampered[byte] ^= 1 << bit
                    expect(.authenticationFailed(keyIndex: 2), { try decryptor.decrypt(tampered) }, "\(frame.name) byte \(byte) bit \(bit)")
                }
            }
        }
    }

    func testTamperedCiphertextTagOrIVIsRefused() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = try decryptor(vectors)
        for frame in vectors.frames {
            let layout = try EncryptedFrameLayout(parsing: frame.encrypted)
            let places = [
                ("first ciphertext byte", layout.clearLength), ("last ciphertext byte", layout.tagOffset - 1),
                ("tag", layout.tagOffset), ("last tag byte", layout.ivOffset - 1), ("IV", layout.ivOffset),
                ("last IV byte", layout.ivOffset + 11),
            ]
            for (name, offset) in places {
                var tampered = frame.encrypted
                tampered[offset] ^= 0x80
                expect(.authenticationFailed(keyIndex: 2), { try decryptor.decrypt(tampered) }, "\(frame.name): \(name)")
            }
        }
    }

    func testWrongKeyIsRefused() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = FrameDecryptor()
        try decryptor.setKey(try FrameKey.derive(passphrase: vectors.passphrase + "x"), at: 2)
        expect(.authenticationFailed(keyIndex: 2)) { try decryptor.decrypt(vectors.keyframe.encrypted) }
    }
}
