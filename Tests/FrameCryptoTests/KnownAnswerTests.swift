import FrameCrypto
import XCTest

/// Our PBKDF2 and AES-GCM (OpenSSL) against WebCrypto's output for the same inputs, byte for byte.
final class KnownAnswerTests: XCTestCase {
    func testThePassphraseGivesWebCryptosKey() throws {
        let vectors = try KnownAnswerVectors.load()
        XCTAssertEqual(vectors.salt, FrameKey.defaultSalt)
        XCTAssertEqual(vectors.iterations, FrameKey.defaultIterations)
        XCTAssertEqual(try FrameKey.derive(passphrase: vectors.passphrase).rawBytes, vectors.key)
        XCTAssertEqual(try FrameKey.derive(passphrase: vectors.passphrase, salt: vectors.otherSalt).rawBytes, vectors.otherSaltKey)
        XCTAssertNotEqual(vectors.key, vectors.otherSaltKey, "the salt matters")
    }

    func testOurEncryptorWritesWebCryptosBytes() throws {
        let vectors = try KnownAnswerVectors.load()
        // One encryptor for both frames: the keyed context is reused across frames.
        let encryptor = try FrameEncryptor(key: try FrameKey(raw: vectors.key), keyIndex: vectors.keyIndex)
        for frame in vectors.frames {
            let ours = try encryptor.encrypt(frame.plain, iv: try FrameIV(bytes: frame.iv))
            XCTAssertEqual(ours.count, frame.encrypted.count, frame.name)
            XCTAssertEqual(ours, frame.encrypted, "\(frame.name): first difference at \(ours.indices.first { ours[$0] != frame.encrypted[$0] } ?? -1)")
        }
        XCTAssertEqual(encryptor.framesEncrypted, 2)
    }

    func testOurDecryptorReadsWebCryptosFrames() throws {
        let vectors = try KnownAnswerVectors.load()
        let decryptor = FrameDecryptor()
        try decryptor.setKey(try FrameKey.derive(passphrase: vectors.passphrase), at: vectors.keyIndex)
        for frame in vectors.frames {
            XCTAssertEqual(try decryptor.decrypt(frame.encrypted), frame.plain, frame.name)
        }
    }

    /// The frames really are what they claim: a keyframe with VP8's start code, a delta frame, and their
    /// encrypted forms keep exactly the clear header and hide the rest.
    func testTheVectorsKeepTheClearHeaderAndHideTheRest() throws {
        let vectors = try KnownAnswerVectors.load()
        XCTAssertEqual(Array(vectors.keyframe.plain[3..<6]), [0x9D, 0x01, 0x2A], "RFC 6386 §9.1 start code")
        XCTAssertEqual(vectors.deltaFrame.plain[0] & 1, 1)
        for frame in vectors.frames {
            let clear = frame.isKeyframe ? 10 : 3
            XCTAssertEqual(Array(frame.encrypted.prefix(clear)), Array(frame.plain.prefix(clear)), frame.name)
            let hidden = zip(frame.encrypted[clear..<frame.plain.count], frame.plain[clear...]).filter { $0 == $1 }.count
            // Ciphertext equals plaintext at about 1 byte in 256 by chance.
            XCTAssertLessThan(hidden, frame.plain.count / 64, frame.name)
            XCTAssertEqual(frame.encrypted.count, frame.plain.count + FrameCryptorFormat.overhead)
            XCTAssertEqual(Array(frame.encrypted.suffix(14).prefix(12)), frame.iv)
        }
    }
}
