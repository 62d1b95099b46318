import DTLS
import Foundation
import ICE
import PeerConnection
import ScreencastSupport
import SDP
import Synchronization
import TestSupport
import XCTest

/// Offers with many candidates: past ``RemoteTransport/maxCandidates`` refused before any socket is opened;
/// below it answered, with the refused candidates (over the ICE agent's limit, or refused by its address
/// policy) logged once per offer with their count, not a line each (a review's five offers of 1,250
/// candidates wrote 6,110 lines).
final class ManyCandidatesTests: XCTestCase {
    private func offer(_ candidates: [String]) throws -> String {
        let base = try SDPFixture.text("chromium-whep-offer.sdp").replacingOccurrences(of: "\r\n", with: "\n")
        var lines = base.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.hasPrefix("a=candidate:") }
        let at = lines.firstIndex { $0.hasPrefix("a=ice-ufrag:") }!
        lines.insert(contentsOf: candidates, at: at)
        return lines.joined(separator: "\r\n")
    }

    private func answer(_ offer: String, lines: CapturedLines) throws -> PeerConnection {
        let output = LogOutput { line in lines.lines.withLock { $0.append(line) } }
        return try PeerConnection.answering(
            offer: offer, id: "many", configuration: PeerConnection.Configuration(
                ice: ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.shared()),
            logger: Logger(component: "test", threshold: .debug, output: output), onEvent: { _ in })
    }

    func testTwoThousandCandidatesAreRefusedAsTooMany() throws {
        let lines = CapturedLines()
        let text = try offer((0..<2_000).map { "a=candidate:\($0) 1 udp 1 10.0.0.1 \(1 + $0) typ host" })
        XCTAssertThrowsError(try answer(text, lines: lines)) { error in
            XCTAssertEqual(error as? PeerConnectionError, .sdp(.tooManyCandidates(count: 2_000, limit: RemoteTransport.maxCandidates)))
            XCTAssertTrue((error as? PeerConnectionError)?.isPeerError == true)
        }
        XCTAssertEqual(lines.lines.withLock { $0.filter { $0.contains("candidate") } }, [], "nothing logged per candidate")
    }

    /// 250 usable loopback candidates (the ICE agent takes 32) and 6 mDNS names: one line says how many went
    /// over the limit, one how many were skipped; none names each candidate.
    func testCandidatesOverTheLimitAreLoggedOncePerOffer() throws {
        let lines = CapturedLines()
        let candidates = (0..<250).map { "a=candidate:\($0) 1 udp 1 127.0.0.1 \(10_000 + $0) typ host" }
            + (0..<6).map { "a=candidate:m\($0) 1 udp 1 x\($0).local 9 typ host" }
        let peer = try answer(try offer(candidates), lines: lines)
        defer { peer.close() }
        let logged = lines.lines.withLock { $0 }
        let candidateLines = logged.filter { $0.contains("candidate") && !$0.contains("peer answered") && !$0.contains("local") }
        XCTAssertLessThanOrEqual(candidateLines.count, 3, candidateLines.joined(separator: "\n"))
        let overLimit = logged.filter { $0.contains("remote candidates over the limit refused") }
        XCTAssertEqual(overLimit.count, 1, logged.joined(separator: "\n"))
        XCTAssertTrue(overLimit.first?.contains("count=218") == true, overLimit.first ?? "")
        let skipped = logged.filter { $0.contains("remote candidates skipped") }
        XCTAssertEqual(skipped.count, 1)
        XCTAssertTrue(skipped.first?.contains("count=6") == true, skipped.first ?? "")
        let answered = logged.first { $0.contains("peer answered") } ?? ""
        XCTAssertTrue(answered.contains("candidates.remote=256") && answered.contains("candidates.usable=32"), answered)
    }

    /// 200 candidates the address policy refuses (another network than the agent's loopback): one line.
    func testCandidatesRefusedByPolicyAreLoggedOncePerOffer() throws {
        let lines = CapturedLines()
        let peer = try answer(try offer((0..<200).map { "a=candidate:\($0) 1 udp 1 10.0.0.1 \(1 + $0) typ host" }), lines: lines)
        defer { peer.close() }
        let refused = lines.lines.withLock { $0.filter { $0.contains("remote candidates refused") || $0.contains("remote candidate refused") } }
        XCTAssertEqual(refused.count, 1, refused.joined(separator: "\n"))
        XCTAssertTrue(refused.first?.contains("count=200") == true, refused.first ?? "")
    }
}

/// Log lines captured in memory.
final class CapturedLines: Sendable {
    let lines = Mutex<[String]>([])
}
