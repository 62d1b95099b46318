import Foundation
import Glibc
import TestSupport
import ICE
import SDP
import XCTest

/// `stunServer` behind a real NAT: on loopback the STUN-mapped address equals the host one and libnice drops
/// it (see ``ICEServerTests/testGatheringWithASTUNServerFinishes``), so this test builds a NAT out of three
/// network namespaces of its own (as root; the host's network is never touched):
///
///     client 10.200.1.2/24 ── 10.200.1.1 router 10.200.2.1 (nftables masquerade) ── 10.200.2.2/24 server
///
/// coturn runs as a STUN-only server in "server"; the test re-runs itself in "client" (like the end-to-end
/// tests do with `unshare -n`), where an ICEAgent gathering on 10.200.1.2 must report a `typ srflx`
/// candidate at the router's address 10.200.2.1 with `raddr 10.200.1.2`. Fails (never skips) without root,
/// `ip` or `nft`; skipped when coturn is not installed, like the other coturn tests.
final class ICEServerReflexiveTests: XCTestCase {
    static let insideVariable = "SCREENCAST_SRFLX_INSIDE_NETNS"
    static let clientAddress = "10.200.1.2"
    static let routerOutsideAddress = "10.200.2.1"
    static let stunAddress = "10.200.2.2"
    static let stunPort: UInt16 = 3478

    func testServerReflexiveCandidateBehindNAT() throws {
        if ProcessInfo.processInfo.environment[Self.insideVariable] != nil {
            try gatherBehindNAT()
            return
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver") else {
            throw XCTSkip("coturn is not installed (apt-get install coturn)")
        }
        guard getuid() == 0 else {
            return XCTFail("needs root to build network namespaces (ip netns); run as root")
        }
        for tool in [NATNamespaces.ip, NATNamespaces.nft] where !FileManager.default.isExecutableFile(atPath: tool) {
            return XCTFail("\(tool) is missing: run tools/setup")
        }
        let started = Date()
        let net = NATNamespaces()
        defer { net.remove() }
        try net.create()
        let stun = try NamespacedSTUNServer(namespace: net.server, address: Self.stunAddress, port: Self.stunPort)
        defer { stun.stop() }

        let test = "ICETests.ICEServerReflexiveTests/testServerReflexiveCandidateBehindNAT"
        let result = try ProcessRunner.run(
            URL(fileURLWithPath: NATNamespaces.ip),
            ["netns", "exec", net.client, "/usr/bin/env", "\(Self.insideVariable)=1", CommandLine.arguments[0], test],
            timeout: 60)
        let report = result.stdout.split(separator: "\n").filter { $0.hasPrefix("srflx:") }.joined(separator: "\n")
        print("\(test) behind a NAT of namespaces: \(String(format: "%.1f", Date().timeIntervalSince(started))) s\n\(report)")
        XCTAssertFalse(result.timedOut, "the inner run timed out:\n\(result.stdout.suffix(6000))")
        XCTAssertEqual(result.status, 0, "inner run failed:\n\(result.stdout.suffix(8000))\n\(result.stderr.suffix(4000))")
        XCTAssertTrue(result.stdout.contains("Executed 1 test, with 0 failures"), result.stdout.suffix(6000).description)
    }

    /// Runs in the "client" namespace: only 10.200.1.2 (and loopback) exist here.
    private func gatherBehindNAT() throws {
        let log = ICEEventLog()
        let agent = try ICEAgent(
            configuration: .init(role: .controlled, localAddresses: [Self.clientAddress],
                                 stunServer: .init(host: Self.stunAddress, port: Self.stunPort)),
            onEvent: log.record, onDatagram: log.receive)
        defer { agent.close() }
        let start = Date()
        let candidates = try agent.gatherCandidates()
        let elapsed = Date().timeIntervalSince(start)
        for candidate in candidates { print("srflx: \(candidate.description)") }
        print("srflx: gathering took \(String(format: "%.3f", elapsed)) s")
        XCTAssertLessThan(elapsed, 2, "the STUN server answers: gathering must not wait for its time limit")
        XCTAssertTrue(log.wait(seconds: 2) { $0.events.contains(.gatheringDone) })

        let host = try XCTUnwrap(candidates.first { $0.kind == .host }, "\(candidates)")
        XCTAssertEqual(host.address, Self.clientAddress)
        let reflexive = candidates.filter { $0.kind == .serverReflexive && !$0.isTCP }
        XCTAssertEqual(reflexive.count, 1, "\(candidates)")
        // ICE-TCP: libnice derives a server-reflexive TCP candidate of each TCP host one from the UDP
        // mapping (the same outside address; it works where the NAT forwards that TCP port).
        XCTAssertEqual(candidates.filter { $0.kind == .serverReflexive && $0.isTCP }.map(\.address),
                       [Self.routerOutsideAddress, Self.routerOutsideAddress], "\(candidates)")
        let srflx = try XCTUnwrap(reflexive.first, "no server-reflexive candidate: \(candidates)")
        XCTAssertEqual(srflx.address, Self.routerOutsideAddress)
        XCTAssertEqual(srflx.relatedAddress, Self.clientAddress)
        XCTAssertEqual(srflx.relatedPort, host.port)
        XCTAssertEqual(srflx.component, host.component)
        XCTAssertLessThan(srflx.priority, host.priority)
        let line = srflx.description
        XCTAssertTrue(line.contains(" \(Self.routerOutsideAddress) \(srflx.port) typ srflx raddr \(Self.clientAddress) rport \(host.port)"),
                      line)
        // The line survives the parser a remote peer would use.
        let parsed = try ICECandidate(parsing: line)
        XCTAssertEqual(parsed.kind, .serverReflexive)
        XCTAssertEqual(parsed.relatedAddress, Self.clientAddress)
    }
}

/// Three network namespaces of this test process ("client", "router", "server"; names carry the pid) wired
/// client ⇄ router ⇄ server with veth pairs created inside them, the router masquerading what leaves towards
/// the server. `remove()` deletes them (and with them the veths) even after a partial `create()`.
final class NATNamespaces {
    static let ip = "/usr/sbin/ip"
    static let nft = "/usr/sbin/nft"
    let client: String
    let router: String
    let server: String

    init() {
        let prefix = "sc-srflx-\(getpid())"
        client = "\(prefix)-client"
        router = "\(prefix)-router"
        server = "\(prefix)-server"
    }

    func create() throws {
        let nat = """
            table ip nat {
                chain postrouting {
                    type nat hook postrouting priority srcnat; policy accept;
                    oifname "out0" masquerade
                }
            }
            """
        let steps: [[String]] = [
            ["netns", "add", client], ["netns", "add", router], ["netns", "add", server],
            ["-n", client, "link", "add", "eth0", "type", "veth", "peer", "name", "in0", "netns", router],
            ["-n", router, "link", "add", "out0", "type", "veth", "peer", "name", "eth0", "netns", server],
            ["-n", client, "addr", "add", "10.200.1.2/24", "dev", "eth0"],
            ["-n", client, "link", "set", "lo", "up"], ["-n", client, "link", "set", "eth0", "up"],
            ["-n", client, "route", "add", "default", "via", "10.200.1.1"],
            ["-n", router, "addr", "add", "10.200.1.1/24", "dev", "in0"],
            ["-n", router, "addr", "add", "10.200.2.1/24", "dev", "out0"],
            ["-n", router, "link", "set", "lo", "up"], ["-n", router, "link", "set", "in0", "up"],
            ["-n", router, "link", "set", "out0", "up"],
            ["netns", "exec", router, "/usr/sbin/sysctl", "-qw", "net.ipv4.ip_forward=1"],
            ["netns", "exec", router, Self.nft, nat],
            // The server knows no route back to 10.200.1.0/24: only masqueraded packets can be answered.
            ["-n", server, "addr", "add", "10.200.2.2/24", "dev", "eth0"],
            ["-n", server, "link", "set", "lo", "up"], ["-n", server, "link", "set", "eth0", "up"],
        ]
        for step in steps {
            let result = try ProcessRunner.run(URL(fileURLWithPath: Self.ip), step, timeout: 10)
            guard result.status == 0, !result.timedOut else {
                throw ICETestFailure("ip \(step.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
            }
        }
    }

    func remove() {
        for name in [client, router, server] {
            _ = try? ProcessRunner.run(URL(fileURLWithPath: Self.ip), ["netns", "del", name], timeout: 10)
        }
    }
}

/// coturn as a STUN-only server in a namespace, its state in a temporary folder.
final class NamespacedSTUNServer {
    private let process: Process
    private let folder: TemporaryDirectory

    init(namespace: String, address: String, port: UInt16) throws {
        folder = try TemporaryDirectory(prefix: "srflx-coturn")
        process = Process()
        process.executableURL = URL(fileURLWithPath: NATNamespaces.ip)
        // `ip netns exec` execs turnserver: the process is coturn itself.
        process.arguments = [
            "netns", "exec", namespace, "/usr/bin/turnserver",
            "-n", "--listening-ip=\(address)", "--listening-port=\(port)", "--stun-only",
            "--no-tls", "--no-dtls", "--no-tcp", "--no-cli", "--no-rfc5780",
            "--pidfile=\(folder.path("turn.pid"))", "--userdb=\(folder.path("turndb"))",
            "--log-file=stdout", "--simple-log",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // /proc/net/udp as the namespace sees it lists the bound socket (address and port in hex, little-endian
        // address as the kernel prints it).
        let octets = address.split(separator: ".").compactMap { UInt8($0) }
        let entry = String(format: "%02X%02X%02X%02X:%04X", octets[3], octets[2], octets[1], octets[0], port)
        let deadline = Date().addingTimeInterval(5)
        while true {
            let table = try ProcessRunner.run(URL(fileURLWithPath: NATNamespaces.ip),
                                              ["netns", "exec", namespace, "/bin/cat", "/proc/net/udp"], timeout: 5)
            if table.stdout.contains(entry) { break }
            guard Date() < deadline, process.isRunning else {
                stop()
                throw ICETestFailure("coturn did not start on \(address):\(port) in \(namespace)")
            }
            usleep(50_000)
        }
    }

    func stop() {
        ProcessRunner.terminate(process)
        folder.remove()
    }
}
