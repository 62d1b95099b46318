import ICE
import SDP
import TestSupport
import XCTest

/// What the ICE module refuses before any socket opens, with the words it uses, and whose fault each error
/// is; and which remote candidates it hands libnice.
final class ICEConfigurationTests: XCTestCase {
    func reason(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            guard case .invalidConfiguration(let reason)? = error as? ICEError else { return "not invalidConfiguration: \(error)" }
            return reason
        }
    }

    /// `--stun HOST:PORT` forms and the reason each refusal gives.
    func testServerAddressReasons() {
        let cases: [(String, String)] = [
            ("", "bad host"), (":3478", "bad host"), ("a b:1", "bad host"), ("user@host:1", "bad host"), ("host/x", "bad host"),
            ("host:", "bad port"), ("host:0", "bad port"), ("host:65536", "bad port"), ("host:x", "bad port"),
            ("[::1", "no ']'"), ("[::1]x", "junk after ']'"), ("[]:1", "bad host"), ("[::1]:0", "bad port"),
        ]
        for (text, why) in cases {
            XCTAssertEqual(reason { try ICEServerAddress(parsing: text) }, "bad server address '\(text)': \(why)", text)
        }
        XCTAssertEqual(try ICEServerAddress(parsing: "stun.example.org", defaultPort: 19302).port, 19302)
        XCTAssertEqual(try ICEServerAddress(parsing: "fe80::1%2").host, "fe80::1%2", "a bare IPv6 literal keeps every colon")
        XCTAssertEqual(ICEServerAddress(host: "192.0.2.1", port: 3478).description, "192.0.2.1:3478")
    }

    /// `--turn URL` forms (RFC 7065 §3.1) and their reasons.
    func testTURNURLReasons() throws {
        let cases: [(String, String)] = [
            ("stun:host", "expected turn: or turns:"), ("http://host", "expected turn: or turns:"), ("turn:", "no host"),
            ("turn:?transport=udp", "no host"), ("turn:host?transport=sctp", "unsupported query 'transport=sctp'"),
            ("turns:host?transport=udp", "unsupported query 'transport=udp'"), ("turn:host?x=1", "unsupported query 'x=1'"),
            ("turn:host:99999", "bad host or port"), ("turn:[::1", "bad host or port"),
        ]
        for (url, why) in cases {
            XCTAssertEqual(reason { try TURNServer(url: url, username: "u", credential: "p") }, "bad TURN URL '\(url)': \(why)", url)
        }
        let upper = try TURNServer(url: "TURN:turn.example.org:3480?TRANSPORT=TCP", username: "alice", credential: "s3cret")
        XCTAssertEqual(upper.transport, .tcp)
        XCTAssertEqual(upper.address, ICEServerAddress(host: "turn.example.org", port: 3480))
        XCTAssertEqual(upper.username, "alice")
        XCTAssertEqual(upper.credential, "s3cret")
        XCTAssertFalse(upper.description.contains("s3cret"), "the URI never shows the credential")
        XCTAssertEqual(try TURNServer(url: "turns:192.0.2.1", username: "u", credential: "p").description, "turns:192.0.2.1:5349?transport=tcp")
    }

    /// An agent's settings are checked before anything is created.
    func testAgentSettingsRefusedUpFront() throws {
        let cases: [(ICEAgent.Configuration, String)] = [
            (.init(role: .controlled, localAddresses: ["127.0.0.1", "localhost"]), "--ice-address localhost is not an IP address"),
            (.init(role: .controlled, localAddresses: ["127.0.0.1"], portRange: 0...10), "the ICE port range starts at 0"),
            (.init(role: .controlled, localAddresses: ["127.0.0.1"], sendQueueLimit: -1), "negative send queue limit"),
            (.init(role: .controlling, localAddresses: ["127.0.0.1"], relayOnly: true), "relay-only ICE needs a TURN server"),
        ]
        for (configuration, why) in cases {
            XCTAssertEqual(reason { try ICEAgent(configuration: configuration, onDatagram: { _ in }) }, why)
        }
        let defaults = ICEAgent.Configuration(role: .controlled)
        XCTAssertEqual(defaults.gatheringTimeLimit, .seconds(3))
        XCTAssertEqual(defaults.connectTimeLimit, .seconds(30))
        XCTAssertEqual(defaults.failedGracePeriod, .seconds(5))
        XCTAssertFalse(defaults.consentFreshness, "consent is the peer connection's (ConsentFreshness)")
        XCTAssertEqual(defaults.sendQueueLimit, 256)
        XCTAssertEqual(defaults.localAddresses, [])
    }

    /// Whose fault each error is, and what it says.
    func testErrorsBlameAndText() {
        let errors: [ICEError] = [
            .badRemoteCandidate("candidate:x", reason: "bad priority x"), .badRemoteCredentials(reason: "too short"),
            .gatheringFailed(reason: "no local candidates"), .invalidConfiguration("why"), .agentFailure("thread"), .closed,
        ]
        XCTAssertEqual(errors.map(\.isPeerError), [true, true, false, false, false, false])
        XCTAssertEqual(errors.map(\.description), [
            "bad remote ICE candidate (candidate:x): bad priority x", "bad remote ICE credentials: too short",
            "ICE candidate gathering failed: no local candidates", "invalid ICE configuration: why", "ICE agent failure: thread",
            "the ICE agent is closed",
        ])
    }

    /// Of a peer's candidates, libnice gets the UDP and TCP (with a known `tcptype`), component-1, IP-literal
    /// ones of known types; the rest are skipped (not errors); malformed ones are the peer's error, nothing
    /// applied.
    func testWhichRemoteCandidatesAreUsed() throws {
        let agent = try ICEAgent(configuration: .init(role: .controlled, localAddresses: ["127.0.0.1"]), onDatagram: { _ in })
        defer { agent.close() }
        _ = try agent.gatherCandidates()
        try agent.setRemoteCredentials(.init(ufrag: "peer", password: "peerpassword0123456789"))
        let skipped = [
            "candidate:1 2 udp 100 127.0.0.1 9000 typ host", "candidate:2 1 tcp 100 127.0.0.1 9 typ host",
            "candidate:3 1 udp 100 abcd.local 9001 typ host", "candidate:4 1 udp 100 127.0.0.1 9002 typ x-future",
        ]
        XCTAssertEqual(try agent.addRemoteCandidates(skipped), 0)
        XCTAssertFalse(try agent.addRemoteCandidate(skipped[0]))
        let usable = ["candidate:5 1 udp 2130706431 127.0.0.1 9003 typ host",
                      "a=candidate:6 1 UDP 1694498815 127.0.0.1 9004 typ srflx raddr 127.0.0.1 rport 9003\r\n",
                      "candidate:9 1 tcp 1518280447 127.0.0.1 9 typ host tcptype active"]
        XCTAssertEqual(try agent.addRemoteCandidates(skipped + usable), 3)
        XCTAssertThrowsError(try agent.addRemoteCandidates([usable[0], "candidate:7 1 udp x 127.0.0.1 9 typ host"])) { error in
            XCTAssertEqual(error as? ICEError, .badRemoteCandidate("candidate:7 1 udp x 127.0.0.1 9 typ host", reason:
                "SDP line 0: bad a=candidate: bad priority x"))
        }
        XCTAssertThrowsError(try agent.addRemoteCandidate("candidate:8 1 udp 1 127.0.0.1 9\u{7} typ host")) { error in
            XCTAssertEqual(error as? ICEError, .badRemoteCandidate("candidate:8 1 udp 1 127.0.0.1 9\u{7} typ host", reason: "control character"))
        }
        for bad in [ICEAgent.Credentials(ufrag: "abc", password: "peerpassword0123456789"),
                    ICEAgent.Credentials(ufrag: "peer", password: "short"), ICEAgent.Credentials(ufrag: "pe:r", password: "peerpassword0123456789")] {
            XCTAssertThrowsError(try agent.setRemoteCredentials(bad)) { error in
                guard case .badRemoteCredentials? = error as? ICEError else { return XCTFail("\(error)") }
            }
        }
    }
}
