import TestSupport
import DTLS
import SDP
import SRTP
import XCTest

/// Garbage from the wire never crashes an endpoint: it is ignored, or (only during the handshake, for
/// plaintext records OpenSSL finds malformed) ends it with a typed error.
final class DTLSGarbageTests: XCTestCase {
    /// Random bytes (not shaped like a DTLS record) at every stage of a handshake are dropped: the
    /// handshake completes, nobody throws.
    func testRandomDatagramsAreIgnoredDuringTheHandshake() throws {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<20 {
            let link = try DTLSLink.pair()
            try link.client.start(nowMicros: DTLSLink.now())
            for _ in 0..<4 {  // before the ClientHello reaches the server, then between flights
                for _ in 0..<8 {
                    let datagram = Self.garbage(dressed: false, using: &generator)
                    try link.client.receive(datagram, nowMicros: DTLSLink.now())
                    try link.server.receive(datagram, nowMicros: DTLSLink.now())
                }
                _ = link.deliver()
            }
            XCTAssertTrue(link.run(limit: 5), "round \(round): \(link.client.state) \(link.server.state)")
        }
    }

    /// Plaintext (epoch 0) records with a valid-looking header but nonsense inside: OpenSSL answers some with
    /// a fatal alert (allowed by RFC 6347 §4.1.2.7), which ends the handshake with a typed error; the rest are
    /// dropped. Nothing crashes, nothing hangs.
    func testRecordShapedGarbageDuringTheHandshakeFailsWithATypedErrorOrIsIgnored() throws {
        var generator = SeededGenerator(seed: 11)
        var completed = 0, failed = 0
        for round in 0..<40 {
            let link = try DTLSLink.pair()
            try link.client.start(nowMicros: DTLSLink.now())
            for _ in 0..<3 {
                let datagram = Self.garbage(dressed: true, using: &generator)
                for endpoint in [link.client, link.server] {
                    do { try endpoint.receive(datagram, nowMicros: DTLSLink.now()) } catch {
                        guard case DTLSError.handshake = error else { return XCTFail("round \(round): \(error)") }
                        XCTAssertEqual(endpoint.state, .failed(error))
                    }
                }
                _ = link.deliver()
            }
            link.run(limit: 5, until: { $0.bothConnected || $0.client.state.isTerminal || $0.server.state.isTerminal })
            if link.bothConnected { completed += 1 } else { failed += 1 }
            XCTAssertTrue(link.bothConnected || link.client.state.failure != nil || link.server.state.failure != nil,
                          "round \(round) hangs: \(link.client.state) \(link.server.state)")
        }
        print("DTLS record-shaped garbage: \(completed) handshakes completed, \(failed) ended with a typed error")
    }

    /// Once connected, garbage of any shape (plaintext records, records of the current epoch that fail their
    /// tag, records too short to hold one) is dropped: the endpoint stays connected and sends nothing back
    /// (no alert). A failure names the datagram (index and bytes) and OpenSSL's verdict.
    func testGarbageAfterTheHandshakeIsIgnored() throws {
        var generator = SeededGenerator(seed: 13)
        let link = try DTLSLink.pair()
        XCTAssertTrue(link.run())
        let keys = link.client.keyingMaterial
        let before = link.server.statistics
        for index in 0..<300 {
            let datagram = Self.garbage(dressed: Bool.random(using: &generator), using: &generator)
            for (name, endpoint) in [("client", link.client), ("server", link.server)] {
                do { try endpoint.receive(datagram, nowMicros: DTLSLink.now()) } catch {
                    return XCTFail("garbage datagram #\(index) (\(datagram.count) bytes: \(datagram.hex)) ended the \(name): \(error)")
                }
                let answer = endpoint.takeDatagrams()
                XCTAssertEqual(answer, [], "garbage datagram #\(index) (\(datagram.hex)) made the \(name) send \(answer.map(\.hex))")
            }
        }
        XCTAssertEqual(link.client.keyingMaterial, keys)
        XCTAssertEqual(link.server.keyingMaterial, keys)
        let after = link.server.statistics
        XCTAssertEqual(after.datagramsReceived - before.datagramsReceived, 300)
        XCTAssertGreaterThan(after.totalRecordsDropped, before.totalRecordsDropped)
        XCTAssertGreaterThan(after.recordsPassed, before.recordsPassed, "some garbage reached OpenSSL, which discarded it")
    }

    func testEmptyAndNonDTLSDatagramsAreIgnored() throws {
        let link = try DTLSLink.pair()
        for datagram: [UInt8] in [[], [0], [1, 2, 3], [128] + Array(repeating: 0, count: 40), [19, 254, 253]] {
            try link.server.receive(datagram, nowMicros: 0)
        }
        XCTAssertEqual(link.server.state, .idle, "STUN/RTP-looking datagrams do not start the server")
        XCTAssertTrue(link.run())
        for datagram: [UInt8] in [[], [22], [23, 254, 253, 0, 1], Array(repeating: 23, count: 100)] {
            try link.server.receive(datagram, nowMicros: DTLSLink.now())
        }
        XCTAssertNotNil(link.server.keyingMaterial)
    }

    /// Random bytes; `dressed`, they start with a DTLS 1.2 record header (content type 20–23, version FE FD,
    /// epoch 0 or 1, a length that fits) over random content.
    static func garbage(dressed: Bool, using generator: inout SeededGenerator) -> [UInt8] {
        let length = Int.random(in: dressed ? 13...400 : 0...400, using: &generator)
        var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        if dressed {
            bytes[0] = [20, 21, 22, 23].randomElement(using: &generator)!
            bytes[1] = 0xFE
            bytes[2] = 0xFD
            bytes[3] = 0
            bytes[4] = UInt8.random(in: 0...1, using: &generator)
            let body = length - 13
            bytes[11] = UInt8(body >> 8)
            bytes[12] = UInt8(body & 0xFF)
            if body >= 12, bytes[0] == 22 { bytes[13] = UInt8.random(in: 0...20, using: &generator) }  // handshake type
        } else if let first = bytes.first, (20...63).contains(first), length >= 3 {
            bytes[1] = 0  // not FE FD: not a DTLS 1.x record header
        }
        return bytes
    }
}
