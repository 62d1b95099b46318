import SDP
import TestSupport
import XCTest

/// Random values after every attribute name the parser knows: each either parses to an attribute of that
/// name that prints back to the same line, or is refused as a bad attribute of that name on its line —
/// nothing else, never a crash.
final class SDPAttributeFuzzTests: XCTestCase {
    static let typedNames = [
        "rtpmap", "fmtp", "rtcp-fb", "mid", "group", "ice-ufrag", "ice-pwd", "ice-options", "fingerprint", "setup", "candidate",
        "ssrc", "ssrc-group", "extmap",
    ]

    func testRandomValuesParseOrAreRefusedAsThatAttribute() throws {
        var generator = SeededGenerator(seed: 77)
        // Printable ASCII and the characters the grammars care about, with spaces, colons and slashes often.
        let alphabet = Array("0123456789abcdefABCDEF/:;= *.-+_ \t")
        var outcomes = (parsed: 0, refused: 0)
        for name in Self.typedNames {
            for _ in 0..<300 {
                let value = String((0..<Int.random(in: 1...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                let line = "a=\(name):\(value)"
                let description: SessionDescription
                do {
                    description = try SessionDescription(parsing: SDPAttributeTests.session(line))
                } catch {
                    outcomes.refused += 1
                    guard case .badAttribute(5, let refusedName, _) = error else { return XCTFail("\(line): \(error)") }
                    XCTAssertEqual(refusedName, name, line)
                    continue
                }
                do {
                    let parsed = try XCTUnwrap(description.attributes.last)
                    outcomes.parsed += 1
                    XCTAssertEqual(parsed.name, name, line)
                    // Printed back, it parses to the same attribute (text may normalize, e.g. a lowercased hash name).
                    XCTAssertEqual(try SessionDescription(parsing: SDPAttributeTests.session("a=" + parsed.sdpText)).attributes.last, parsed, line)
                }
            }
        }
        XCTAssertGreaterThan(outcomes.parsed, 300, "\(outcomes)")
        XCTAssertGreaterThan(outcomes.refused, 1000, "\(outcomes)")
    }

    /// In the fixtures, every attribute whose name the parser types is typed (none falls through to
    /// `.other`), and the others are kept as written.
    func testFixtureAttributesAreTyped() throws {
        for name in ["chromium-whep-offer.sdp", "chromium-sendrecv-two-video-offer.sdp", "aiortc-offer.sdp"] {
            let offer = try SessionDescription(parsing: fixture(name))
            let all = offer.attributes + offer.media.flatMap(\.attributes)
            for attribute in all {
                if case .other(let other, _) = attribute {
                    XCTAssertFalse(Self.typedNames.contains(other) || MediaDirection(rawValue: other) != nil, "\(name): a=\(other) untyped")
                }
            }
            XCTAssertGreaterThan(all.filter { if case .other = $0 { false } else { true } }.count, 20, name)
        }
    }
}
