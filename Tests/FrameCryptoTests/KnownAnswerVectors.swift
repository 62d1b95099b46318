import FrameCrypto
import Foundation
import XCTest

/// `Vectors/vp8-vectors.json`: inputs and outputs of WebCrypto (node), see `Vectors/README.md`.
struct KnownAnswerVectors: Sendable {
    struct Frame: Sendable {
        var name: String
        var isKeyframe: Bool
        var plain: [UInt8]
        var iv: [UInt8]
        var encrypted: [UInt8]
    }

    var passphrase: String
    var salt: String
    var iterations: Int
    var keyIndex: Int
    var key: [UInt8]
    var otherSalt: String
    var otherSaltKey: [UInt8]
    var frames: [Frame]

    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/vp8-vectors.json")

    /// Read once per process (the file is ~23 KB; a static let is initialized once, thread-safely).
    private static let cached = Result { try parse() }

    static func load() throws -> KnownAnswerVectors { try cached.get() }

    private static func parse() throws -> KnownAnswerVectors {
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let other = try XCTUnwrap(object["otherSalt"] as? [String: Any])
        let frames = try XCTUnwrap(object["frames"] as? [[String: Any]]).map { frame in
            Frame(
                name: try XCTUnwrap(frame["name"] as? String), isKeyframe: try XCTUnwrap(frame["isKeyframe"] as? Bool),
                plain: try hex(frame["plainHex"]), iv: try hex(frame["ivHex"]), encrypted: try hex(frame["encryptedHex"]))
        }
        return KnownAnswerVectors(
            passphrase: try XCTUnwrap(object["passphrase"] as? String), salt: try XCTUnwrap(object["salt"] as? String),
            iterations: try XCTUnwrap(object["iterations"] as? Int), keyIndex: try XCTUnwrap(object["keyIndex"] as? Int),
            key: try hex(object["keyHex"]), otherSalt: try XCTUnwrap(other["salt"] as? String), otherSaltKey: try hex(other["keyHex"]),
            frames: frames)
    }

    var keyframe: Frame { frames.first { $0.isKeyframe }! }
    var deltaFrame: Frame { frames.first { !$0.isKeyframe }! }

    private static func hex(_ value: Any?) throws -> [UInt8] {
        let text = Array(try XCTUnwrap(value as? String).utf8)
        guard text.count % 2 == 0 else { throw VectorError.badHex }
        func nibble(_ c: UInt8) throws -> UInt8 {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            default: throw VectorError.badHex
            }
        }
        return try stride(from: 0, to: text.count, by: 2).map { try nibble(text[$0]) << 4 | nibble(text[$0 + 1]) }
    }

    enum VectorError: Error { case badHex }
}
