import Foundation
import Glibc
@testable import ICE
import SDP
import XCTest

/// The open door of ICE: which remote candidates a real libnice agent takes (the policy, the count limit)
/// and how fast it checks them (the pacing it is given).
final class RemoteCandidatePolicyTests: XCTestCase {
    private func candidate(_ address: String, _ port: Int) -> String {
        "candidate:\(port) 1 UDP 2122260223 \(address) \(port) typ host"
    }

    private func agent(_ configuration: ICEAgent.Configuration) throws -> ICEAgent {
        let agent = try ICEAgent(configuration: configuration, onDatagram: { _ in })
        _ = try agent.gatherCandidates()
        try agent.setRemoteCredentials(.init(ufrag: "abcd", password: "0123456789abcdefghijkl"))
        return agent
    }

    func testAddressesAreSortedIntoLoopbackPrivateAndGlobal() {
        let cases: [(String, AddressScope)] = [
            ("127.0.0.1", .loopback), ("127.255.0.9", .loopback), ("::1", .loopback), ("::ffff:127.0.0.1", .loopback),
            ("10.0.0.1", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
            ("192.168.1.5", .privateNetwork), ("169.254.3.4", .privateNetwork), ("100.64.0.1", .privateNetwork),
            ("fd12:3456::1", .privateNetwork), ("fe80::1", .privateNetwork), ("::ffff:10.1.2.3", .privateNetwork),
            ("172.15.255.255", .global), ("172.32.0.0", .global), ("192.169.0.1", .global), ("100.128.0.1", .global),
            ("8.8.8.8", .global), ("2001:db8::1", .global), ("fec0::1", .global),
            ("localhost", .notAnAddress), ("", .notAnAddress), ("1.2.3", .notAnAddress),
        ]
        for (address, scope) in cases {
            XCTAssertEqual(AddressScope(ipLiteral: address), scope, address)
            let loopbackAllowed = RemoteCandidatePolicy.loopback.refusal(of: address) == nil
            let privateAllowed = RemoteCandidatePolicy.privateOnly.refusal(of: address) == nil
            XCTAssertEqual(loopbackAllowed, scope == .loopback, address)
            XCTAssertEqual(privateAllowed, scope == .loopback || scope == .privateNetwork, address)
            XCTAssertNil(RemoteCandidatePolicy.any.refusal(of: address), address)
        }
        XCTAssertEqual(RemoteCandidatePolicy.loopback.refusal(of: "8.8.8.8"), "8.8.8.8 is not a loopback address (--remote-candidates loopback)")
    }

    func testTheAutomaticPolicyIsLoopbackOnlyWhenEveryLocalAddressIs() {
        XCTAssertEqual(RemoteCandidatePolicy.automatic(localAddresses: ["127.0.0.1"]), .loopback)
        XCTAssertEqual(RemoteCandidatePolicy.automatic(localAddresses: ["127.0.0.1", "::1"]), .loopback)
        XCTAssertEqual(RemoteCandidatePolicy.automatic(localAddresses: ["127.0.0.1", "192.168.1.2"]), .any)
        XCTAssertEqual(RemoteCandidatePolicy.automatic(localAddresses: []), .any)
        var configuration = ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"])
        XCTAssertEqual(configuration.effectiveRemoteCandidatePolicy, .loopback)
        configuration.remoteCandidatePolicy = .any
        XCTAssertEqual(configuration.effectiveRemoteCandidatePolicy, .any)
    }

    /// A call bound to loopback takes loopback candidates only; `any` takes the same LAN candidate.
    func testALoopbackAgentRefusesOtherCandidatesAndCountsThem() throws {
        let bound = try agent(ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"]))
        defer { bound.close() }
        XCTAssertEqual(try bound.addRemoteCandidates([candidate("192.168.1.5", 50_000), candidate("8.8.8.8", 50_001)]), 0)
        XCTAssertEqual(try bound.addRemoteCandidates([candidate("127.0.0.1", 50_002)]), 1)
        XCTAssertEqual(bound.statistics.remoteCandidatesRefused, 2)

        let open = try agent(ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], remoteCandidatePolicy: .any))
        defer { open.close() }
        XCTAssertEqual(try open.addRemoteCandidates([candidate("192.168.1.5", 50_000)]), 1)
        XCTAssertEqual(open.statistics.remoteCandidatesRefused, 0)

        let lan = try agent(ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], remoteCandidatePolicy: .privateOnly))
        defer { lan.close() }
        XCTAssertEqual(try lan.addRemoteCandidates([candidate("10.1.2.3", 50_000), candidate("8.8.4.4", 50_001)]), 1)
        XCTAssertEqual(lan.statistics.remoteCandidatesRefused, 1)
    }

    /// The limit counts the offer's and the trickled candidates together; the first ones are kept.
    func testCandidatesPastTheLimitAreRefused() throws {
        let limited = try agent(ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], remoteCandidateLimit: 4))
        defer { limited.close() }
        XCTAssertEqual(try limited.addRemoteCandidates((0..<3).map { candidate("127.0.0.1", 50_000 + $0) }), 3)
        XCTAssertEqual(try limited.addRemoteCandidates((3..<10).map { candidate("127.0.0.1", 50_000 + $0) }), 1)
        XCTAssertEqual(try limited.addRemoteCandidates([candidate("127.0.0.1", 50_100)]), 0)
        XCTAssertEqual(limited.statistics.remoteCandidatesRefused, 7)
        XCTAssertEqual(ICEAgent.Configuration(role: .controlled).remoteCandidateLimit, 32)
        XCTAssertThrowsError(try ICEAgent(configuration: .init(role: .controlled, remoteCandidateLimit: 0), onDatagram: { _ in }))
    }

    func testThePacingAndTheCheckLimitReachLibnice() throws {
        let defaults = try ICEAgent(configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"]), onDatagram: { _ in })
        defer { defaults.close() }
        XCTAssertEqual(defaults.libniceUInt("stun-pacing-timer"), 50)
        XCTAssertEqual(defaults.libniceUInt("max-connectivity-checks"), 64)
        let custom = try ICEAgent(
            configuration: .init(role: .controlling, localAddresses: ["127.0.0.1"], checkPacingMilliseconds: 120, checkLimit: 9),
            onDatagram: { _ in })
        defer { custom.close() }
        XCTAssertEqual(custom.libniceUInt("stun-pacing-timer"), 120)
        XCTAssertEqual(custom.libniceUInt("max-connectivity-checks"), 9)
        XCTAssertThrowsError(try ICEAgent(configuration: .init(role: .controlling, checkPacingMilliseconds: 0), onDatagram: { _ in }))
    }

    /// Ten silent remote candidates on loopback sockets of this test: over 2 s, a controlling agent paced at
    /// 100 ms sends at most 2 s / 100 ms new checks plus libnice's retransmissions of the ones in flight;
    /// unpaced (libnice's 20 ms default) it would send well over 60.
    func testChecksToSilentCandidatesArePaced() throws {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [Int] = []
        for _ in 0..<10 {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            XCTAssertGreaterThanOrEqual(fd, 0)
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            XCTAssertTrue(bound)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        let paced = try agent(ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.1"], checkPacingMilliseconds: 100))
        defer { paced.close() }
        XCTAssertEqual(try paced.addRemoteCandidates(ports.map { candidate("127.0.0.1", $0) }), 10)
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 2048)
        let end = Date().addingTimeInterval(2)
        while Date() < end {
            for fd in sockets {
                while recv(fd, &buffer, buffer.count, 0) > 0 { received += 1 }
            }
            usleep(5_000)
        }
        print("ice: 10 silent candidates, checks paced at 100 ms: \(received) STUN requests in 2 s")
        XCTAssertGreaterThan(received, 0, "no checks at all")
        XCTAssertLessThanOrEqual(received, 40, "checks not paced")
    }
}
