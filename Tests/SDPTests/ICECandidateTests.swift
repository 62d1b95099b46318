import SDP
import XCTest

/// ``ICECandidate``: the `a=candidate` grammar of RFC 8839 §5.1, field by field, printed back byte for
/// byte, and every malformed form refused with its reason.
final class ICECandidateTests: XCTestCase {
    /// The forms browsers, aiortc and libnice write.
    func testFormsParseFieldByFieldAndPrintBack() throws {
        struct Case {
            var text: String
            var foundation: String, component: UInt16, transport: String, priority: UInt32
            var address: String, port: UInt16, kind: ICECandidate.Kind
            var related: (String?, UInt16?) = (nil, nil)
            var extensions: [String] = []
        }
        let cases = [
            Case(text: "1467250027 1 udp 2122260223 192.168.1.20 54321 typ host generation 0 network-id 1",
                 foundation: "1467250027", component: 1, transport: "udp", priority: 2_122_260_223, address: "192.168.1.20", port: 54321,
                 kind: .host, extensions: ["generation", "network-id"]),
            Case(text: "3e0a 1 udp 2122194687 3e0a8f2c-1111-2222-3333-444455556666.local 61000 typ host",
                 foundation: "3e0a", component: 1, transport: "udp", priority: 2_122_194_687,
                 address: "3e0a8f2c-1111-2222-3333-444455556666.local", port: 61000, kind: .host),
            Case(text: "2 1 TCP 1518280447 192.0.2.4 9 typ host tcptype active",
                 foundation: "2", component: 1, transport: "TCP", priority: 1_518_280_447, address: "192.0.2.4", port: 9, kind: .host,
                 extensions: ["tcptype"]),
            Case(text: "842163049 1 udp 1677729535 203.0.113.5 52200 typ srflx raddr 192.168.1.20 rport 54321",
                 foundation: "842163049", component: 1, transport: "udp", priority: 1_677_729_535, address: "203.0.113.5", port: 52200,
                 kind: .serverReflexive, related: ("192.168.1.20", 54321)),
            Case(text: "9 2 udp 16777214 198.51.100.9 3478 typ relay raddr 203.0.113.5 rport 52200 ufrag Qx9b",
                 foundation: "9", component: 2, transport: "udp", priority: 16_777_214, address: "198.51.100.9", port: 3478,
                 kind: .relay, related: ("203.0.113.5", 52200), extensions: ["ufrag"]),
            Case(text: "a+b/c 1 udp 1845501695 fd00::1 40000 typ prflx raddr fd00::2",
                 foundation: "a+b/c", component: 1, transport: "udp", priority: 1_845_501_695, address: "fd00::1", port: 40000,
                 kind: .peerReflexive, related: ("fd00::2", nil)),
            Case(text: "7 1 udp 0 10.0.0.1 0 typ x-future", foundation: "7", component: 1, transport: "udp", priority: 0,
                 address: "10.0.0.1", port: 0, kind: .other("x-future")),
            Case(text: "4 1 udp 4294967295 10.0.0.1 65535 typ host rport 9",
                 foundation: "4", component: 1, transport: "udp", priority: .max, address: "10.0.0.1", port: 65535, kind: .host,
                 related: (nil, 9)),
        ]
        for c in cases {
            let candidate = try ICECandidate(parsing: c.text)
            XCTAssertEqual(candidate.foundation, c.foundation, c.text)
            XCTAssertEqual(candidate.component, c.component, c.text)
            XCTAssertEqual(candidate.transport, c.transport, c.text)
            XCTAssertEqual(candidate.priority, c.priority, c.text)
            XCTAssertEqual(candidate.address, c.address, c.text)
            XCTAssertEqual(candidate.port, c.port, c.text)
            XCTAssertEqual(candidate.kind, c.kind, c.text)
            XCTAssertEqual(candidate.relatedAddress, c.related.0, c.text)
            XCTAssertEqual(candidate.relatedPort, c.related.1, c.text)
            XCTAssertEqual(candidate.extensions.map(\.name), c.extensions, c.text)
            XCTAssertEqual(candidate.sdpValue, c.text)
            XCTAssertEqual(candidate.description, "candidate:" + c.text)
            // With or without the prefixes, the same candidate.
            XCTAssertEqual(try ICECandidate(parsing: "candidate:" + c.text), candidate)
            XCTAssertEqual(try ICECandidate(parsing: "a=candidate:" + c.text), candidate)
        }
    }

    /// Each field's rule, with the reason given.
    func testMalformedCandidatesGiveTheirReason() {
        let shape = "expected '<foundation> <component> <transport> <priority> <address> <port> typ <type>'"
        let cases: [(String, String)] = [
            ("", shape),
            ("1 1 udp 1 10.0.0.1 5", shape),
            ("1 1 udp 1 10.0.0.1 5 type host", shape),
            ("1 1 udp 1 10.0.0.1 5 host typ", shape),
            (String(repeating: "f", count: 33) + " 1 udp 1 10.0.0.1 5 typ host", "bad foundation"),
            ("f-o 1 udp 1 10.0.0.1 5 typ host", "bad foundation"),
            (" 1 udp 1 10.0.0.1 5 typ host", "bad foundation"),
            ("1 0 udp 1 10.0.0.1 5 typ host", "bad component 0"),
            ("1 65536 udp 1 10.0.0.1 5 typ host", "bad component 65536"),
            ("1 x udp 1 10.0.0.1 5 typ host", "bad component x"),
            ("1 1 u/p 1 10.0.0.1 5 typ host", "bad transport"),
            ("1 1  1 10.0.0.1 5 typ host", "bad transport"),
            ("1 1 udp 4294967296 10.0.0.1 5 typ host", "bad priority 4294967296"),
            ("1 1 udp -1 10.0.0.1 5 typ host", "bad priority -1"),
            ("1 1 udp 1  5 typ host", "empty address"),
            ("1 1 udp 1 10.0.0.1 65536 typ host", "bad port 65536"),
            ("1 1 udp 1 10.0.0.1 5 typ ", "empty type"),
            ("1 1 udp 1 10.0.0.1 5 typ host raddr 10.0.0.2 rport 70000", "bad rport 70000"),
            ("1 1 udp 1 10.0.0.1 5 typ host generation", "extension without a value"),
            ("1 1 udp 1 10.0.0.1 5 typ host a b c", "extension without a value"),
            ("1 1 udp 1 10.0.0.1 5 typ host  x", "empty extension"),
        ]
        for (text, reason) in cases {
            assertThrowsSDPError(try ICECandidate(parsing: text), .badAttribute(line: 0, name: "candidate", reason: reason))
        }
    }

    /// Two candidates are equal when they print the same; IP literals and host names; ice-chars.
    func testEqualityAddressesAndCharacters() throws {
        let built = ICECandidate(
            foundation: "5", priority: 100, address: "192.0.2.9", port: 7, kind: .serverReflexive, relatedAddress: "10.0.0.1",
            relatedPort: 1, extensions: [("generation", "0")])
        XCTAssertEqual(built, try ICECandidate(parsing: "5 1 udp 100 192.0.2.9 7 typ srflx raddr 10.0.0.1 rport 1 generation 0"))
        XCTAssertNotEqual(built, try ICECandidate(parsing: "5 1 UDP 100 192.0.2.9 7 typ srflx raddr 10.0.0.1 rport 1 generation 0"))
        for (address, literal) in [
            ("192.0.2.9", true), ("0.0.0.0", true), ("255.255.255.255", true), ("::1", true), ("fd00::20", true),
            ("256.0.0.1", false), ("1.2.3", false), ("1.2.3.4.5", false), ("1..2.3", false), ("1234.1.1.1", false),
            ("host.local", false), ("abc", false), ("", false),
        ] {
            XCTAssertEqual(ICECandidate.isIPLiteral(address), literal, address)
        }
        XCTAssertTrue(ICECandidate.isICEChars("AZaz09+/"))
        XCTAssertFalse(ICECandidate.isICEChars("a-b"))
        XCTAssertFalse(ICECandidate.isICEChars("é"))
        XCTAssertEqual(ICECandidate.Kind.other("x").token, "x")
        XCTAssertEqual([ICECandidate.Kind.host, .serverReflexive, .peerReflexive, .relay].map(\.token), ["host", "srflx", "prflx", "relay"])
    }
}
