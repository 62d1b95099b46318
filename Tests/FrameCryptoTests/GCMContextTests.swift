@testable import FrameCrypto
import XCTest

/// The AES-GCM context every frame goes through, against the GCM specification's own test cases (McGrew and
/// Viega, "The Galois/Counter Mode of Operation", test cases 4 and 16: a 96-bit IV, 20 bytes of AAD and a
/// 60-byte plaintext; the same figures as NIST SP 800-38D's validation vectors).
final class GCMContextTests: XCTestCase {
    private static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    private let iv = bytes("cafebabefacedbaddecaf888")
    private let aad = bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    private let plaintext = bytes(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
    private let key128 = bytes("feffe9928665731c6d6a8f9467308308")

    /// Runs the context over `input`; returns the output, the tag and whether it authenticated.
    private func run(_ context: GCMContext, input: [UInt8], tag: [UInt8] = [UInt8](repeating: 0, count: 16), iv: [UInt8]? = nil) throws
        -> (output: [UInt8], tag: [UInt8], authentic: Bool)
    {
        var output = [UInt8](repeating: 0, count: input.count)
        var tag = tag
        let authentic = try (iv ?? self.iv).withUnsafeBufferPointer { ivBuffer in
            try aad.withUnsafeBufferPointer { aadBuffer in
                try input.withUnsafeBufferPointer { inputBuffer in
                    try output.withUnsafeMutableBufferPointer { out in
                        try tag.withUnsafeMutableBufferPointer { t in
                            try context.run(iv: ivBuffer.baseAddress!, aad: aadBuffer, input: inputBuffer, output: out.baseAddress!, tag: t.baseAddress!)
                        }
                    }
                }
            }
        }
        return (output, tag, authentic)
    }

    func testAES128GCMMatchesTestCase4AndDecryptsBack() throws {
        let sealed = try run(GCMContext(key: FrameKey(raw: key128), encrypting: true), input: plaintext)
        XCTAssertEqual(sealed.output, Self.bytes(
            "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"))
        XCTAssertEqual(sealed.tag, Self.bytes("5bc94fbc3221a5db94fae95ae7121a47"))
        XCTAssertTrue(sealed.authentic)
        let opened = try run(GCMContext(key: FrameKey(raw: key128), encrypting: false), input: sealed.output, tag: sealed.tag)
        XCTAssertTrue(opened.authentic)
        XCTAssertEqual(opened.output, plaintext)
    }

    func testAES256GCMMatchesTestCase16() throws {
        let sealed = try run(GCMContext(key: FrameKey(raw: key128 + key128), encrypting: true), input: plaintext)
        XCTAssertEqual(sealed.output, Self.bytes(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"))
        XCTAssertEqual(sealed.tag, Self.bytes("76fc6ece0f4e1768cddf8853bb2d551b"))
    }

    func testOneKeyedContextServesFrameAfterFrameWithNewIVs() throws {
        let context = try GCMContext(key: FrameKey(raw: key128), encrypting: true)
        let first = try run(context, input: plaintext)
        var otherIV = iv
        otherIV[11] ^= 1
        let second = try run(context, input: plaintext, iv: otherIV)
        XCTAssertNotEqual(first.output, second.output, "a new IV, a new keystream")
        let third = try run(context, input: plaintext)
        XCTAssertEqual(third.output, first.output, "the key schedule is kept: the same IV gives the same bytes")
        XCTAssertEqual(third.tag, first.tag)
    }

    func testATamperedFrameOrTagDoesNotAuthenticate() throws {
        let sealed = try run(GCMContext(key: FrameKey(raw: key128), encrypting: true), input: plaintext)
        let decryptor = try GCMContext(key: FrameKey(raw: key128), encrypting: false)
        var flipped = sealed.output
        flipped[30] ^= 0x80
        XCTAssertFalse(try run(decryptor, input: flipped, tag: sealed.tag).authentic)
        var badTag = sealed.tag
        badTag[0] ^= 1
        XCTAssertFalse(try run(decryptor, input: sealed.output, tag: badTag).authentic)
        XCTAssertTrue(try run(decryptor, input: sealed.output, tag: sealed.tag).authentic, "the context recovers after failures")
        let wrongKey = try GCMContext(key: FrameKey(raw: Self.bytes("00000000000000000000000000000000")), encrypting: false)
        XCTAssertFalse(try run(wrongKey, input: sealed.output, tag: sealed.tag).authentic)
    }

    func testAnEmptyPayloadStillGetsATagOverTheAAD() throws {
        let sealed = try run(GCMContext(key: FrameKey(raw: key128), encrypting: true), input: [])
        XCTAssertTrue(sealed.authentic)
        XCTAssertNotEqual(sealed.tag, [UInt8](repeating: 0, count: 16))
        XCTAssertTrue(try run(GCMContext(key: FrameKey(raw: key128), encrypting: false), input: [], tag: sealed.tag).authentic)
    }
}
