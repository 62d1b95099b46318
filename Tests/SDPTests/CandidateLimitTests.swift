import SDP
import XCTest

/// An offer's candidates: deduplicated on their parsed fields in linear time, and at most
/// ``RemoteTransport/maxCandidates`` of them (a bad-input review's 1,250 candidate lines took ~3 s of CPU to
/// deduplicate, quadratically, and did so twice per offer).
final class CandidateLimitTests: XCTestCase {
    /// The Chromium WHEP offer fixture with its candidate lines replaced by `candidates`.
    private func offer(_ candidates: [String]) throws -> SessionDescription {
        let base = try fixture("chromium-whep-offer.sdp").replacingOccurrences(of: "\r\n", with: "\n")
        var lines = base.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.hasPrefix("a=candidate:") }
        let at = lines.firstIndex { $0.hasPrefix("a=ice-ufrag:") }!
        lines.insert(contentsOf: candidates, at: at)
        return try SessionDescription(parsing: lines.joined(separator: "\r\n"))
    }

    private static func host(_ index: Int, address: String = "10.0.0.1") -> String {
        "a=candidate:\(index) 1 udp 1 \(address) \(1 + index) typ host"
    }

    func testTheLimitIsNamed() { XCTAssertEqual(RemoteTransport.maxCandidates, 256) }

    func testAnOfferAtTheLimitIsAnsweredWithEachCandidateOnce() throws {
        let lines = (0..<RemoteTransport.maxCandidates).map { Self.host($0) }
        let (_, negotiated) = try VideoAnswerBuilder.answer(offer(lines), local: localParameters())
        XCTAssertEqual(negotiated.remote.candidates.count, 256)
        XCTAssertEqual(negotiated.remote.candidates.map(\.port), (0..<256).map { UInt16(1 + $0) }, "in the offer's order")
    }

    func testRepeatsAreDroppedAndNearTwinsKept() throws {
        let lines = [Self.host(1), Self.host(2), Self.host(1), "a=candidate:1 1 udp 1 10.0.0.1 2 typ host generation 0",
                     "a=candidate:1 1 udp 1 10.0.0.1 2 typ host raddr 0.0.0.0 rport 0", Self.host(2), Self.host(1, address: "10.0.0.2")]
        let (_, negotiated) = try VideoAnswerBuilder.answer(offer(lines), local: localParameters())
        XCTAssertEqual(negotiated.remote.candidates.map(\.sdpValue), [
            "1 1 udp 1 10.0.0.1 2 typ host", "2 1 udp 1 10.0.0.1 3 typ host", "1 1 udp 1 10.0.0.1 2 typ host generation 0",
            "1 1 udp 1 10.0.0.1 2 typ host raddr 0.0.0.0 rport 0", "1 1 udp 1 10.0.0.2 2 typ host",
        ])
    }

    /// Equal exactly when their SDP texts are equal, and equal ones hash alike (the Set relies on it).
    func testEqualityFollowsTheSDPText() throws {
        let texts = ["1 1 udp 1 10.0.0.1 2 typ host", "1 1 UDP 1 10.0.0.1 2 typ host", "1 1 udp 1 10.0.0.1 2 typ srflx raddr 1.2.3.4 rport 5",
                     "1 1 udp 1 10.0.0.1 2 typ srflx raddr 1.2.3.4", "1 1 udp 1 10.0.0.1 2 typ host a b", "1 1 udp 1 10.0.0.1 2 typ host a c",
                     "1 1 udp 1 10.0.0.1 2 typ weird"]
        let candidates = try texts.map { try ICECandidate(parsing: $0) }
        for a in candidates {
            for b in candidates {
                XCTAssertEqual(a == b, a.sdpValue == b.sdpValue, "\(a) vs \(b)")
                if a == b { XCTAssertEqual(a.hashValue, b.hashValue) }
            }
        }
        XCTAssertEqual(ICECandidate(foundation: "1", priority: 1, address: "a", port: 1, kind: .other("host")),
                       ICECandidate(foundation: "1", priority: 1, address: "a", port: 1, kind: .host))
    }

    /// 2,000 candidate lines (a review sent 1,250): refused as the peer's fault with the count and the limit,
    /// after one linear pass.
    func testAnOfferWithTwoThousandCandidatesIsRefused() throws {
        let parsed = try offer((0..<2_000).map { Self.host($0) })
        XCTAssertEqual(parsed.media[0].candidates.count, 2_000)
        XCTAssertThrowsError(try VideoAnswerBuilder.answer(parsed, local: localParameters())) { error in
            XCTAssertEqual(error as? SDPError, .tooManyCandidates(count: 2_000, limit: 256))
            XCTAssertTrue((error as? SDPError)?.isPeerError == true)
            XCTAssertEqual((error as? SDPError)?.description, "the offer has 2000 ICE candidates, more than the 256 accepted")
        }
        XCTAssertThrowsError(try VideoAnswerBuilder.answer(offer((0..<257).map { Self.host($0) }), local: localParameters())) { error in
            XCTAssertEqual(error as? SDPError, .tooManyCandidates(count: 257, limit: 256))
        }
    }
}
