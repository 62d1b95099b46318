import Foundation
import TestSupport
import DTLS
import SDP
import SRTP
import XCTest

/// One test per shape of stray record an established DTLS-SRTP connection can be sent (RFC 6347 §4.1 header,
/// §4.1.2.7: invalid records are discarded silently). Each feeds real OpenSSL endpoints, checks the record
/// was dropped (by our header check, or by OpenSSL's authentication) without an answer, and then proves the
/// connection is alive: the client's genuine close_notify still reaches the server and closes it.
final class DTLSRecordShapeTests: XCTestCase {
    // MARK: Short and long protected records

    /// The OpenSSL 3.0 fault: a protected record shorter than the suite's overhead ended the connection
    /// (SSL_ERROR_SYSCALL, an internal_error alert to the peer). Every length below the overhead, of every
    /// content type, under every suite, is now dropped before OpenSSL; from the overhead up the record goes
    /// to OpenSSL, which discards it for its tag.
    func testProtectedRecordsShorterThanTheCipherOverheadAreDroppedUnderEverySuite() throws {
        for suite in DTLSCipherSuite.allCases {
            let link = try Self.connected(suite: suite)
            let overhead = suite.recordOverhead
            var datagrams: [[UInt8]] = []
            for type: UInt8 in 20...23 {
                for length in 1..<(overhead + 8) { datagrams.append(DTLSRecordBytes.record(type: type, body: DTLSRecordBytes.filler(length))) }
            }
            let counts = try Self.assertDropped(datagrams, by: link, "\(suite)")
            XCTAssertEqual(counts.dropped, [.shorterThanCipherOverhead: 4 * (overhead - 1)], "\(suite)")
            XCTAssertEqual(counts.passed, 4 * 8, "\(suite): from the overhead up OpenSSL judges (and discards) them")
            try Self.assertStillConnected(link)
        }
    }

    /// Records of every size from the overhead up to DTLS's largest (2^14 + 2048 bytes of body, RFC 5246
    /// §6.2.3) go to OpenSSL, which discards them for their tag; longer ones are dropped by their header.
    func testLongForgedRecordsAreDiscarded() throws {
        let link = try Self.connected()
        let lengths = [24, 25, 40, 100, 1000, 1187, 4096, 16_384, 16_384 + 2048, 16_384 + 2049, 30_000, 0xFFFF]
        let counts = try Self.assertDropped(lengths.map { DTLSRecordBytes.record(body: DTLSRecordBytes.filler($0)) }, by: link, "long")
        XCTAssertEqual(counts.dropped, [.longerThanAllowed: 3])
        XCTAssertEqual(counts.passed, lengths.count - 3)
        try Self.assertStillConnected(link)
    }

    // MARK: Header fields

    /// Epochs other than the current one (1): plaintext epoch 0 (whatever its type), the next epochs, the
    /// largest.
    func testRecordsOfAnotherEpochAreDropped() throws {
        let link = try Self.connected()
        var datagrams: [[UInt8]] = []
        for epoch: UInt16 in [0, 2, 3, 0x100, 0xFFFF] {
            for type: UInt8 in 20...23 { datagrams.append(DTLSRecordBytes.record(type: type, epoch: epoch, body: DTLSRecordBytes.filler(40))) }
        }
        let counts = try Self.assertDropped(datagrams, by: link, "epoch")
        XCTAssertEqual(counts.dropped, [.epoch: datagrams.count])
        try Self.assertStillConnected(link)
    }

    /// Once DTLS 1.2 is agreed, no other version: DTLS 1.0, DTLS 1.3's FE FC, TLS 1.0–1.2, nonsense.
    func testRecordsOfAnotherVersionAreDropped() throws {
        let link = try Self.connected()
        let versions: [UInt16] = [0xFEFF, 0xFEFC, 0xFEFE, 0xFE00, 0x0301, 0x0303, 0x0000, 0xFFFF, 0xFDFD]
        let datagrams = versions.map { DTLSRecordBytes.record(version: $0, body: DTLSRecordBytes.filler(40)) }
        let counts = try Self.assertDropped(datagrams, by: link, "version")
        XCTAssertEqual(counts.dropped, [.version: versions.count])
        try Self.assertStillConnected(link)
    }

    /// Content types 0–19 and 24–255 inside a datagram (the first byte must be 20–63 to be DTLS at all,
    /// RFC 7983 §7, so the odd type is the second record), and as the first record within 20–63.
    func testUnknownContentTypesAreDropped() throws {
        let link = try Self.connected()
        let plaintext = DTLSRecordBytes.record(type: 22, epoch: 0, body: DTLSRecordBytes.filler(30))  // epoch 0: dropped too, counted apart
        var datagrams: [[UInt8]] = (24...63).map { DTLSRecordBytes.record(type: UInt8($0), body: DTLSRecordBytes.filler(40)) }
        datagrams += [0, 1, 19, 64, 127, 128, 200, 255].map { plaintext + DTLSRecordBytes.record(type: $0, body: DTLSRecordBytes.filler(40)) }
        let counts = try Self.assertDropped(datagrams, by: link, "content type")
        XCTAssertEqual(counts.dropped, [.contentType: 40 + 8, .epoch: 8])
        try Self.assertStillConnected(link)
    }

    /// Length fields: zero, one past the datagram's end, far past it, 0xFFFF; and a length shorter than
    /// the bytes that follow (the rest is framed as a record of its own and dropped for what it is).
    func testBadLengthFieldsAreDropped() throws {
        let link = try Self.connected()
        func withLength(_ length: Int, body: Int) -> [UInt8] {
            var bytes = DTLSRecordBytes.record(body: DTLSRecordBytes.filler(body))
            bytes[11] = UInt8(length >> 8)
            bytes[12] = UInt8(length & 0xFF)
            return bytes
        }
        let datagrams = [
            DTLSRecordBytes.record(body: []), DTLSRecordBytes.record(type: 21, body: []),
            withLength(41, body: 40), withLength(1000, body: 40), withLength(0xFFFF, body: 40), withLength(0xFFFF, body: 0),
            withLength(30, body: 36),  // 6 bytes left over: a truncated header
            withLength(24, body: 24) + DTLSRecordBytes.record(type: 99, body: DTLSRecordBytes.filler(30)),  // framed apart, dropped for its type
        ]
        let counts = try Self.assertDropped(datagrams, by: link, "length")
        XCTAssertEqual(counts.dropped[.empty], 2)
        XCTAssertEqual(counts.dropped[.lengthBeyondDatagram], 4)
        XCTAssertEqual(counts.dropped[.truncatedHeader], 1)
        XCTAssertEqual(counts.dropped[.contentType], 1)
        XCTAssertEqual(counts.dropped.values.reduce(0, +), 8)
        XCTAssertEqual(counts.passed, 2, "the two records with a 30- and 24-byte length reach OpenSSL and fail their tag")
        try Self.assertStillConnected(link)
    }

    /// A genuine close_notify cut at every length: under 13 bytes a truncated header, then a length beyond
    /// the datagram; whole, it closes the connection (the parser byte by byte, then all at once).
    func testTruncatedRecordsAreDroppedAtEveryLength() throws {
        let link = try Self.connected()
        let closeNotify = try Self.closeNotify(from: link.client)
        XCTAssertEqual(closeNotify.count, 13 + 2 + 24, "an alert under AES-GCM")
        let counts = try Self.assertDropped((1..<closeNotify.count).map { Array(closeNotify[..<$0]) }, by: link, "truncated")
        XCTAssertEqual(counts.dropped, [.truncatedHeader: 12, .lengthBeyondDatagram: closeNotify.count - 13])
        XCTAssertEqual(counts.passed, 0)
        try link.server.receive(closeNotify, nowMicros: DTLSLink.now())
        XCTAssertEqual(link.server.state, .closed(byPeer: true))
    }

    // MARK: Mixed datagrams, unauthenticated alerts and handshakes

    /// Several records in one datagram, garbage around a genuine one: the garbage is dropped, the genuine
    /// close_notify still arrives (and is answered with ours).
    func testGenuineRecordsAmongGarbageInOneDatagramStillArrive() throws {
        let link = try Self.connected()
        let closeNotify = try Self.closeNotify(from: link.client)
        let short = DTLSRecordBytes.record(type: 21, body: DTLSRecordBytes.filler(7))
        let forged = DTLSRecordBytes.record(type: 21, sequence: 0x2000, body: DTLSRecordBytes.filler(26))
        let plaintext = DTLSRecordBytes.record(type: 21, epoch: 0, body: [2, 40])
        let datagram = short + forged + plaintext + closeNotify + DTLSRecordBytes.record(body: DTLSRecordBytes.filler(3)) + [23, 0xFE, 0xFD]
        try link.server.receive(datagram, nowMicros: DTLSLink.now())
        XCTAssertEqual(link.server.state, .closed(byPeer: true))
        XCTAssertEqual(link.server.takeDatagrams().count, 1, "our close_notify in answer")
        XCTAssertEqual(link.server.statistics.recordsDropped, [.shorterThanCipherOverhead: 2, .epoch: 1, .truncatedHeader: 1])
    }

    /// Alerts and handshake messages that no key vouches for: plaintext fatal alerts and close_notify,
    /// a plaintext ClientHello, forged alerts of the current epoch, alerts of the next epoch. None ends or
    /// renegotiates the connection; a genuine close_notify still does.
    func testUnauthenticatedAlertsAndHandshakesAfterTheHandshakeAreIgnored() throws {
        for victim in [\DTLSLink.server, \DTLSLink.client] {
            let link = try Self.connected()
            let endpoint = link[keyPath: victim]
            let helloBody: [UInt8] = [1, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0, 40, 0xFE, 0xFD] + DTLSRecordBytes.filler(38)
            let datagrams = [
                DTLSRecordBytes.record(type: 21, epoch: 0, body: [2, 40]),  // fatal handshake_failure
                DTLSRecordBytes.record(type: 21, epoch: 0, body: [1, 0]),  // close_notify
                DTLSRecordBytes.record(type: 21, version: 0xFEFF, epoch: 0, body: [2, 70]),  // fatal protocol_version
                DTLSRecordBytes.record(type: 22, epoch: 0, body: helloBody),
                DTLSRecordBytes.record(type: 20, epoch: 0, body: [1]),  // change_cipher_spec
                DTLSRecordBytes.record(type: 21, body: DTLSRecordBytes.filler(26)),  // forged alert: fails its tag
                DTLSRecordBytes.record(type: 21, body: [2, 40] + DTLSRecordBytes.filler(24)),
                DTLSRecordBytes.record(type: 22, body: DTLSRecordBytes.filler(60)),  // forged Finished-sized handshake
                DTLSRecordBytes.record(type: 21, epoch: 2, body: DTLSRecordBytes.filler(26)),
            ]
            _ = try Self.assertDropped(datagrams, by: endpoint, "alert/handshake")
            let other = victim == \DTLSLink.server ? link.client : link.server
            try endpoint.receive(try Self.closeNotify(from: other), nowMicros: DTLSLink.now())
            XCTAssertEqual(endpoint.state, .closed(byPeer: true))
        }
    }

    /// During the handshake too, protected records that cannot be genuine are dropped: epoch 1 before a
    /// cipher suite is chosen, short ones after; epoch 2 and up always. The handshake completes.
    func testImpossibleProtectedRecordsDuringTheHandshakeAreDropped() throws {
        let link = try DTLSLink.pair()
        try link.client.start(nowMicros: DTLSLink.now())
        let strays = [
            DTLSRecordBytes.record(type: 22, body: DTLSRecordBytes.filler(7)), DTLSRecordBytes.record(type: 21, body: DTLSRecordBytes.filler(23)),
            DTLSRecordBytes.record(type: 22, epoch: 2, body: DTLSRecordBytes.filler(60)),
        ]
        var rounds = 0
        while !link.bothConnected, rounds < 10 {
            for stray in strays {
                try link.client.receive(stray, nowMicros: DTLSLink.now())
                try link.server.receive(stray, nowMicros: DTLSLink.now())
            }
            _ = link.deliver()
            rounds += 1
        }
        XCTAssertTrue(link.bothConnected, "client \(link.client.state), server \(link.server.state)")
        for endpoint in [link.client, link.server] {
            let dropped = endpoint.statistics.recordsDropped
            XCTAssertGreaterThan(dropped[.epoch] ?? 0, 0)
            XCTAssertGreaterThan(dropped[.shorterThanCipherOverhead] ?? 0, 0, "once the suite is chosen")
        }
        try Self.assertStillConnected(link)
    }

    /// The server's last flight is lost; the client retransmits its flight, its datagrams salted with
    /// garbage records before and after. The connected server still finds the genuine Finished among them
    /// and answers with its flight again, which completes the client.
    func testARetransmittedFlightAmongGarbageIsStillAnswered() throws {
        let link = try DTLSLink.pair { $0.initialRetransmissionMicros = 30_000 }
        let lostFlight = Flag()
        link.drop = { [unowned link] _, toServer in
            guard !toServer, case .connected = link.server.state else { return false }
            lostFlight.set()
            return true
        }
        link.run(limit: 5, until: { _ in lostFlight.isSet })
        XCTAssertTrue(lostFlight.isSet)
        XCTAssertNotNil(link.server.keyingMaterial)
        XCTAssertNil(link.client.keyingMaterial)
        link.drop = { _, _ in false }

        let deadline = DTLSLink.now() + 5_000_000
        while link.client.keyingMaterial == nil, DTLSLink.now() < deadline {
            if let due = link.client.nextTimeout, due > DTLSLink.now() { usleep(UInt32(due - DTLSLink.now())) }
            try link.client.handleTimeout(nowMicros: DTLSLink.now())
            let flight = link.client.takeDatagrams()
            guard !flight.isEmpty else { continue }
            for datagram in flight {
                let salted = DTLSRecordBytes.record(type: 22, body: DTLSRecordBytes.filler(9)) + DTLSRecordBytes.record(type: 21, epoch: 3, body: [2, 40])
                    + datagram + DTLSRecordBytes.record(type: 22, sequence: 0x3000, body: DTLSRecordBytes.filler(60)) + [22, 0xFE]
                try link.server.receive(salted, nowMicros: DTLSLink.now())
            }
            let answer = link.server.takeDatagrams()
            XCTAssertFalse(answer.isEmpty, "the server answers the retransmitted Finished")
            for datagram in answer { try link.client.receive(datagram, nowMicros: DTLSLink.now()) }
        }
        XCTAssertEqual(link.client.keyingMaterial, link.server.keyingMaterial)
        XCTAssertNotNil(link.client.keyingMaterial)
        try Self.assertStillConnected(link)
    }

    // MARK: Helpers

    /// A connected pair using `suite` only.
    static func connected(suite: DTLSCipherSuite = .ecdheECDSAWithAES128GCMSHA256) throws -> DTLSLink {
        let link = try DTLSLink.pair { $0.cipherSuites = [suite] }
        XCTAssertTrue(link.run(), "client \(link.client.state), server \(link.server.state)")
        XCTAssertEqual(link.server.cipherSuite, suite)
        XCTAssertEqual(link.client.cipherSuite, suite)
        return link
    }

    /// The close_notify `endpoint` sends on `close()`: one protected alert record.
    static func closeNotify(from endpoint: DTLSEndpoint) throws -> [UInt8] {
        endpoint.close()
        let datagrams = endpoint.takeDatagrams()
        XCTAssertEqual(datagrams.count, 1)
        return try XCTUnwrap(datagrams.first)
    }

    /// Feeds the server of `link` each datagram; see ``assertDropped(_:by:_:file:line:)``.
    static func assertDropped(
        _ datagrams: [[UInt8]], by link: DTLSLink, _ label: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (dropped: [DTLSRecordDrop: Int], passed: Int) {
        try assertDropped(datagrams, by: link.server, label, file: file, line: line)
    }

    /// Feeds `endpoint` each datagram: none may throw, change the state or make it send anything (an alert).
    /// Returns what its statistics counted for them: records dropped by reason, records passed to OpenSSL.
    static func assertDropped(
        _ datagrams: [[UInt8]], by endpoint: DTLSEndpoint, _ label: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (dropped: [DTLSRecordDrop: Int], passed: Int) {
        let state = endpoint.state
        let before = endpoint.statistics
        for (index, datagram) in datagrams.enumerated() {
            let shown = datagram.count > 64 ? datagram.prefix(64).hex + "… (\(datagram.count) bytes)" : datagram.hex
            do { try endpoint.receive(datagram, nowMicros: DTLSLink.now()) } catch {
                XCTFail("\(label) #\(index) \(shown) ended the endpoint: \(error)", file: file, line: line)
                throw error
            }
            XCTAssertEqual(endpoint.state, state, "\(label) #\(index) \(shown)", file: file, line: line)
            let answer = endpoint.takeDatagrams()
            XCTAssertEqual(answer, [], "\(label) #\(index) \(shown) was answered", file: file, line: line)
        }
        let after = endpoint.statistics
        XCTAssertEqual(after.datagramsReceived - before.datagramsReceived, datagrams.count, file: file, line: line)
        var dropped = after.recordsDropped
        for (reason, count) in before.recordsDropped { dropped[reason, default: 0] -= count }
        return (dropped.filter { $0.value != 0 }, after.recordsPassed - before.recordsPassed)
    }

    /// The connection still carries genuine records: the client's close_notify closes the server.
    static func assertStillConnected(_ link: DTLSLink, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertNotNil(link.server.keyingMaterial, file: file, line: line)
        try link.server.receive(try closeNotify(from: link.client), nowMicros: DTLSLink.now())
        XCTAssertEqual(link.server.state, .closed(byPeer: true), file: file, line: line)
    }
}

/// A flag set from a closure the test hands away.
private final class Flag {
    private(set) var isSet = false
    func set() { isSet = true }
}

extension Collection<UInt8> {
    /// Lowercase hex, two digits a byte, no separators.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
