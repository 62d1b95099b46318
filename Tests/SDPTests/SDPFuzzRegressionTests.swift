import Foundation
import TestSupport
import SDP
import XCTest

/// Offers `tools/fuzz sdp` found (Tests/Fixtures/fuzz/sdp/), answered as their fixes say.
final class SDPFuzzRegressionTests: XCTestCase {
    private func offer(_ name: String) throws -> SessionDescription {
        let file = try XCTUnwrap(try TestPaths.fuzzRegressions("sdp").first { $0.lastPathComponent == name }, name)
        return try SDPParser().parse(Array(Data(contentsOf: file)))
    }

    /// Issue 13: an offer whose only `a=fingerprint` names a hash function we do not check was answered,
    /// then refused by the DTLS configuration as `invalidConfiguration`, i.e. a 500. It is the peer's fault.
    func testAFingerprintOfAnUnknownHashIsThePeersFault() throws {
        let local = try localParameters()
        for (name, hash) in [("fingerprint-unknown-hash.sdp", "sha-056"), ("fingerprint-unknown-hash-min.sdp", "6")] {
            let offer = try offer(name)
            XCTAssertEqual(offer.media.flatMap(\.fingerprints).map(\.algorithm), [hash], name)
            assertThrowsSDPError(try VideoAnswerBuilder.answer(offer, local: local), .unsupportedFingerprintHash([hash]))
            XCTAssertTrue(SDPError.unsupportedFingerprintHash([hash]).isPeerError)
        }
    }

    /// Beside a fingerprint we check, one we do not is harmless; a usable one only at session level does
    /// not rescue an unusable media-level one (media level overrides, RFC 8122 §5).
    func testOnlyTheFingerprintsThatApplyCount() throws {
        let chromium = try fixture("chromium-whep-offer.sdp")
        let line = try XCTUnwrap(lines(chromium).first { $0.hasPrefix("a=fingerprint:sha-256 ") })
        let digest = line.dropFirst("a=fingerprint:sha-256 ".count)
        let local = try localParameters()

        let both = try SessionDescription(parsing: chromium.replacingOccurrences(
            of: line + "\r\n", with: "a=fingerprint:sha-3-256 \(digest)\r\n" + line + "\r\n"))
        let (_, video) = try VideoAnswerBuilder.answer(both, local: local)
        XCTAssertEqual(video.remote.fingerprints.map(\.algorithm), ["sha-3-256", "sha-256"])

        let unknownOnly = try SessionDescription(parsing: chromium.replacingOccurrences(of: "a=fingerprint:sha-256 ", with: "a=fingerprint:sha-3-256 "))
        assertThrowsSDPError(try VideoAnswerBuilder.answer(unknownOnly, local: local), .unsupportedFingerprintHash(["sha-3-256"]))

        var sessionLevel = unknownOnly
        sessionLevel.attributes.append(.fingerprint(try Fingerprint(sdpValue: "sha-256 \(digest)")))
        assertThrowsSDPError(try VideoAnswerBuilder.answer(sessionLevel, local: local), .unsupportedFingerprintHash(["sha-3-256"]))
    }
}
