import Foundation
@testable import ICE
import ScreencastSupport
import SDP
import Synchronization
import XCTest

/// An offer's candidates go to libnice in one batch (``ICEAgent/addOfferedCandidates(_:)``): the unusable and
/// refused ones are skipped, and each kind of refusal is logged once with its count — an offer may carry
/// hundreds (a bad-input review wrote 6,110 log lines for five offers when each refusal had its own line).
final class OfferedCandidatesTests: XCTestCase {
    private final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func count(_ text: String) -> Int { all.withLock { $0.filter { $0.contains(text) }.count } }
        func first(_ text: String) -> String? { all.withLock { $0.first { $0.contains(text) } } }
    }

    private func candidate(_ address: String, _ port: Int, transport: String = "UDP") throws -> ICECandidate {
        try ICECandidate(parsing: "candidate:\(port) 1 \(transport) 2122260223 \(address) \(port) typ host")
    }

    func testAnOffersRefusalsAreLoggedOncePerKindWithTheirCount() throws {
        let lines = Lines()
        let logger = Logger(component: "ice", threshold: .debug, output: LogOutput { line in lines.all.withLock { $0.append(line) } })
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]), logger: logger,
                                 onEvent: { _ in }, onDatagram: { _ in })
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        try agent.setRemoteCredentials(.init(ufrag: "abcd", password: "0123456789abcdefghijkl"))
        var offered: [ICECandidate] = []
        for index in 0..<10 { offered.append(try candidate("127.0.0.1", 50_000 + index)) }        // taken
        for index in 0..<15 { offered.append(try candidate("192.168.1.\(index + 1)", 51_000)) }   // refused: not loopback
        for index in 0..<5 { offered.append(try candidate("127.0.0.1", 52_000 + index, transport: "TCP")) }  // unusable
        XCTAssertEqual(try agent.addOfferedCandidates(offered), 10)
        XCTAssertEqual(agent.statistics.remoteCandidatesRefused, 15)
        XCTAssertEqual(lines.count("remote candidates refused"), 1)
        XCTAssertTrue(lines.first("remote candidates refused")?.contains("count=15") ?? false, lines.first("refused") ?? "no line")
        XCTAssertEqual(lines.count("remote candidates skipped"), 1)
        XCTAssertTrue(lines.first("remote candidates skipped")?.contains("count=5") ?? false, lines.first("skipped") ?? "no line")
        XCTAssertEqual(lines.count("remote candidate refused"), 0, "no line per candidate")

        // Nothing usable: nothing reaches libnice, nothing thrown.
        XCTAssertEqual(try agent.addOfferedCandidates([try candidate("8.8.8.8", 53_000)]), 0)
        XCTAssertEqual(agent.statistics.remoteCandidatesRefused, 16)
    }
}
