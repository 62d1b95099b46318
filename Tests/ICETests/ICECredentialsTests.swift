import Foundation
@testable import ICE
import TestSupport
import XCTest

/// The local ICE credentials we make (RFC 8445 §5.3): lengths, alphabet, and that they are not repeated.
final class ICECredentialsTests: XCTestCase {
    /// 10 000 pairs from a seeded generator: every one 8 + 24 characters of ALPHA / DIGIT, none repeated,
    /// and all 62 characters used in each position class (no character left out of the alphabet).
    func testTenThousandPairsAreAlphanumericOfTheirLengthsAndDistinct() {
        var generator = SeededGenerator(seed: 7)
        var seen = Set<String>()
        var used = Set<UInt8>()
        for _ in 0..<10_000 {
            let pair = ICEAgent.Credentials.random(using: &generator)
            XCTAssertEqual(pair.ufrag.utf8.count, 8)
            XCTAssertEqual(pair.password.utf8.count, 24)
            for byte in (pair.ufrag + pair.password).utf8 {
                XCTAssertTrue((0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte), "byte \(byte)")
                used.insert(byte)
            }
            XCTAssertTrue(seen.insert(pair.ufrag + ":" + pair.password).inserted)
        }
        XCTAssertEqual(used.count, 62)
    }

    /// What simple-whip-server does with them on an ICE restart: a regular expression made of
    /// `a=ice-pwd:` and the password must match the password literally. A `+` would be a quantifier
    /// (no match), `++` an invalid JavaScript expression (its HTTP 500); ours hold neither.
    func testOurCredentialsMatchThemselvesAsARegularExpression() throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<1000 {
            let pair = ICEAgent.Credentials.random(using: &generator)
            for text in ["a=ice-ufrag:" + pair.ufrag, "a=ice-pwd:" + pair.password] {
                let expression = try NSRegularExpression(pattern: text)
                let range = NSRange(text.startIndex..., in: text)
                XCTAssertEqual(expression.firstMatch(in: text, range: range)?.range, range, text)
            }
        }
    }
}
