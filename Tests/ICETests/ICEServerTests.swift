import Foundation
import Glibc
import Synchronization
import TestSupport
import ICE
import SDP
import XCTest

/// STUN/TURN options: parsing, and a real coturn (Debian `coturn`) on 127.0.0.1 for server-reflexive and
/// relayed candidates. The coturn tests are skipped when `turnserver` is not installed.
final class ICEServerTests: XCTestCase {
    func testServerAddressParsing() throws {
        XCTAssertEqual(try ICEServerAddress(parsing: "stun.example.org"), .init(host: "stun.example.org", port: 3478))
        XCTAssertEqual(try ICEServerAddress(parsing: "127.0.0.1:19302"), .init(host: "127.0.0.1", port: 19302))
        XCTAssertEqual(try ICEServerAddress(parsing: "[::1]:5000"), .init(host: "::1", port: 5000))
        XCTAssertEqual(try ICEServerAddress(parsing: "[::1]"), .init(host: "::1", port: 3478))
        XCTAssertEqual(try ICEServerAddress(parsing: "::1"), .init(host: "::1", port: 3478))
        XCTAssertEqual(ICEServerAddress(host: "::1", port: 5000).description, "[::1]:5000")
        for bad in ["", ":3478", "host:", "host:0", "host:65536", "host:x", "[::1", "[::1]x", "a b:1", "user@host:1"] {
            XCTAssertThrowsError(try ICEServerAddress(parsing: bad), bad) { error in
                guard case .invalidConfiguration? = error as? ICEError else { return XCTFail("\(error)") }
            }
        }
    }

    func testTURNURLParsing() throws {
        let plain = try TURNServer(url: "turn:turn.example.org", username: "u", credential: "p")
        XCTAssertEqual(plain.address, .init(host: "turn.example.org", port: 3478))
        XCTAssertEqual(plain.transport, .udp)
        XCTAssertEqual(try TURNServer(url: "turn:127.0.0.1:3479?transport=udp", username: "u", credential: "p").address.port, 3479)
        XCTAssertEqual(try TURNServer(url: "turn:127.0.0.1:3479?transport=tcp", username: "u", credential: "p").transport, .tcp)
        let secure = try TURNServer(url: "turns:[::1]?transport=tcp", username: "u", credential: "p")
        XCTAssertEqual(secure.transport, .tls)
        XCTAssertEqual(secure.address, .init(host: "::1", port: 5349))
        XCTAssertEqual(secure.description, "turns:[::1]:5349?transport=tcp")
        XCTAssertEqual(plain.description, "turn:turn.example.org:3478?transport=udp")
        for bad in ["stun:host", "turn:", "turn:host?transport=sctp", "turns:host?transport=udp", "turn:host:99999",
                    "http://host"] {
            XCTAssertThrowsError(try TURNServer(url: bad, username: "u", credential: "p"), bad) { error in
                guard case .invalidConfiguration? = error as? ICEError else { return XCTFail("\(error)") }
            }
        }
    }

    func testRelayOnlyNeedsATURNServer() {
        XCTAssertThrowsError(try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"], relayOnly: true),
                                          onDatagram: { _ in })) { error in
            guard case .invalidConfiguration? = error as? ICEError else { return XCTFail("\(error)") }
        }
    }

    /// A host-only answerer and a relay-only offerer: every datagram goes through coturn's relay.
    func testRelayedConnectionThroughCoturn() throws {
        let turn = try ICECoturnProcess()
        defer { turn.stop() }
        let server = try TURNServer(url: "turn:127.0.0.1:\(turn.port)?transport=udp", username: "alice", credential: "secret")
        let offererLog = ICEEventLog()
        let answererLog = ICEEventLog()
        let offerer = try ICEAgent(
            configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"], turnServers: [server], relayOnly: true),
            onEvent: offererLog.record, onDatagram: offererLog.receive)
        let answerer = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]),
            onEvent: answererLog.record, onDatagram: answererLog.receive)
        defer {
            offerer.close()
            answerer.close()
        }
        let offererCandidates = try offerer.gatherCandidates()
        XCTAssertFalse(offererCandidates.isEmpty)
        XCTAssertTrue(offererCandidates.allSatisfy { $0.kind == .relay && $0.address == "127.0.0.1" },
                      "\(offererCandidates)")
        XCTAssertTrue(offererCandidates.allSatisfy { $0.port != turn.port })
        let answererCandidates = try answerer.gatherCandidates()
        try offerer.setRemoteCredentials(answerer.localCredentials)
        try answerer.setRemoteCredentials(offerer.localCredentials)
        try offerer.addRemoteCandidates(answererCandidates.map(\.description))
        try answerer.addRemoteCandidates(offererCandidates.map(\.description))

        let deadline = Date().addingTimeInterval(10)
        while offerer.state != .ready || answerer.state != .ready, Date() < deadline { usleep(5_000) }
        XCTAssertEqual(offerer.state, .ready)
        XCTAssertEqual(answerer.state, .ready)
        XCTAssertEqual(offerer.selectedPair?.local.kind, .relay)
        XCTAssertEqual(answerer.selectedPair?.remote.port, offererCandidates.first?.port)

        let payload = (0..<1200).map { UInt8(truncatingIfNeeded: $0 * 31) }
        XCTAssertEqual(offerer.send(payload), .sent)
        XCTAssertEqual(answerer.send(Array(payload.reversed())), .sent)
        XCTAssertTrue(answererLog.wait(seconds: 3) { $0.datagrams == [payload] })
        XCTAssertTrue(offererLog.wait(seconds: 3) { $0.datagrams == [Array(payload.reversed())] })

        // close() releases the allocation (TURN Refresh with lifetime 0) within its 500 ms limit.
        let start = Date()
        offerer.close()
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
    }

    /// A STUN server on loopback answers with our own address: the server-reflexive candidate equals the
    /// host one, and libnice drops it as redundant (RFC 8445 §5.1.3); gathering still finishes promptly.
    func testGatheringWithASTUNServerFinishes() throws {
        let turn = try ICECoturnProcess()
        defer { turn.stop() }
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"],
                                 stunServer: .init(host: "127.0.0.1", port: turn.port)),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        let start = Date()
        let candidates = try agent.gatherCandidates()
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        XCTAssertTrue(log.wait(seconds: 2) { $0.events.contains(.gatheringDone) })
        XCTAssertTrue(candidates.contains { $0.kind == .host && $0.address == "127.0.0.1" })
        XCTAssertTrue(candidates.allSatisfy { $0.address == "127.0.0.1" })
    }
}

extension ICEServerTests {
    /// A STUN server that never answers (a loopback port nobody listens on): gathering returns the host
    /// candidates when the time limit is reached.
    func testGatheringTimeLimitWithASilentSTUNServer() throws {
        let log = ICEEventLog()
        let deadPort = try LoopbackPort.udp()
        let agent = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"],
                                 stunServer: .init(host: "127.0.0.1", port: deadPort),
                                 gatheringTimeLimit: .milliseconds(300)),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        let start = Date()
        let candidates = try agent.gatherCandidates()
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(elapsed, 0.25)
        XCTAssertLessThan(elapsed, 1.5)
        XCTAssertEqual(candidates.filter { !$0.isTCP }.map(\.kind), [.host])
        XCTAssertEqual(candidates.filter(\.isTCP).map(\.kind), [.host, .host], "ICE-TCP: active and passive")
        XCTAssertFalse(log.events.contains(.gatheringDone))
    }
}

/// coturn on 127.0.0.1 only (listening and relaying), UDP, one long-term user alice/secret.
final class ICECoturnProcess {
    let port: UInt16
    private let process: Process
    private let directory: URL

    init() throws {
        let path = "/usr/bin/turnserver"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("coturn is not installed (apt-get install coturn)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ice-coturn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try LoopbackPort.udp()
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [
            "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(port)",
            "--allow-loopback-peers", "--no-tls", "--no-dtls", "--no-tcp", "--no-tcp-relay", "--no-cli",
            "--lt-cred-mech", "--user=alice:secret", "--realm=screencast", "--no-rfc5780",
            "--pidfile=\(directory.path)/turn.pid", "--userdb=\(directory.path)/turndb",
            "--log-file=stdout", "--simple-log",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(5)
        while !ICECoturnProcess.isListening(port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw ICETestFailure("coturn did not start on 127.0.0.1:\(port)")
            }
            usleep(20_000)
        }
    }

    func stop() {
        ProcessRunner.terminate(process)
        try? FileManager.default.removeItem(at: directory)
    }

    /// True when /proc/net/udp lists a socket bound to 127.0.0.1:port.
    static func isListening(_ port: UInt16) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else { return false }
        return table.contains(String(format: "0100007F:%04X", port))
    }
}
