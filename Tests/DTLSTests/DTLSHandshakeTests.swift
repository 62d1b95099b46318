import Foundation
import Synchronization
import TestSupport
import DTLS
import SDP
import SRTP
import XCTest

/// Two ``DTLSEndpoint``s back to back in memory (swift-nio-ssl's back-to-back channels; aiortc's
/// `test_lossy_channel`): datagrams go from one to the other, optionally lost by a seeded generator; when
/// nothing is in flight, the clock moves to the earliest timeout.
///
/// The clock is the caller's injected clock, but it follows CLOCK_MONOTONIC: OpenSSL decides on its own
/// wall clock whether a retransmission timer expired, so the harness sleeps until a timeout is really due.
final class DTLSLink {
    let client: DTLSEndpoint
    let server: DTLSEndpoint
    var lossRate: Double = 0
    var generator = SeededGenerator(seed: 1)
    /// Drops the datagram with this index (counting every datagram sent, from 0) when it returns true;
    /// the flag says whether it goes to the server.
    var drop: (_ index: Int, _ toServer: Bool) -> Bool = { _, _ in false }
    private(set) var sent = 0
    private(set) var lost = 0
    private(set) var largestDatagram = 0
    private(set) var timeoutsHandled = 0
    /// Errors thrown by each side, in order.
    private(set) var clientErrors: [DTLSError] = []
    private(set) var serverErrors: [DTLSError] = []

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000 }

    init(client: DTLSConfiguration, server: DTLSConfiguration) throws {
        self.client = try DTLSEndpoint(configuration: client)
        self.server = try DTLSEndpoint(configuration: server)
    }

    /// A client and a server with fresh certificates that know each other's fingerprints (unless a wrong one
    /// is given); `tune` adjusts both configurations.
    static func pair(
        clientExpects: Fingerprint? = nil, serverExpects: Fingerprint? = nil,
        tune: (inout DTLSConfiguration) -> Void = { _ in }
    ) throws -> DTLSLink {
        let clientCertificate = try DTLSCertificate.generate(commonName: "client")
        let serverCertificate = try DTLSCertificate.generate(commonName: "server")
        var clientConfiguration = DTLSConfiguration(
            role: .client, certificate: clientCertificate,
            remoteFingerprints: [clientExpects ?? serverCertificate.fingerprint])
        var serverConfiguration = DTLSConfiguration(
            role: .server, certificate: serverCertificate,
            remoteFingerprints: [serverExpects ?? clientCertificate.fingerprint])
        tune(&clientConfiguration)
        tune(&serverConfiguration)
        return try DTLSLink(client: clientConfiguration, server: serverConfiguration)
    }

    /// Runs until `done` holds, nothing can happen any more, or `limit` seconds pass. Returns `done`.
    @discardableResult
    func run(limit: Double = 20, until done: (DTLSLink) -> Bool = { $0.bothConnected }) -> Bool {
        let deadline = Self.now() + UInt64(limit * 1e6)
        do { try client.start(nowMicros: Self.now()) } catch { clientErrors.append(error) }
        do { try server.start(nowMicros: Self.now()) } catch { serverErrors.append(error) }
        while !done(self), Self.now() < deadline {
            if deliver() { continue }
            guard let next = [client.nextTimeout, server.nextTimeout].compactMap({ $0 }).min() else { break }
            let now = Self.now()
            if next > now { usleep(UInt32(min(next - now, deadline - min(deadline, now)))) }
            let later = Self.now()
            timeoutsHandled += 1
            do { try client.handleTimeout(nowMicros: later) } catch { clientErrors.append(error) }
            do { try server.handleTimeout(nowMicros: later) } catch { serverErrors.append(error) }
        }
        return done(self)
    }

    /// Moves every pending datagram one hop; true when any was taken.
    func deliver() -> Bool {
        let fromClient = client.takeDatagrams()
        let fromServer = server.takeDatagrams()
        for datagram in fromClient { pass(datagram, to: server, isServer: true) }
        for datagram in fromServer { pass(datagram, to: client, isServer: false) }
        return !fromClient.isEmpty || !fromServer.isEmpty
    }

    private func pass(_ datagram: [UInt8], to endpoint: DTLSEndpoint, isServer: Bool) {
        sent += 1
        largestDatagram = max(largestDatagram, datagram.count)
        if drop(sent - 1, isServer) || (lossRate > 0 && Double.random(in: 0..<1, using: &generator) < lossRate) {
            lost += 1
            return
        }
        do { try endpoint.receive(datagram, nowMicros: Self.now()) } catch {
            if isServer { serverErrors.append(error) } else { clientErrors.append(error) }
        }
    }

    var bothConnected: Bool { client.keyingMaterial != nil && server.keyingMaterial != nil }
    var bothEnded: Bool { client.state.isTerminal && server.state.isTerminal }
}

extension DTLSState {
    var isTerminal: Bool {
        switch self {
        case .closed, .failed: true
        case .idle, .handshaking, .connected: false
        }
    }

    var failure: DTLSError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

final class DTLSHandshakeTests: XCTestCase {
    func testHandshakeExportsTheSameKeysOnBothSides() throws {
        let link = try DTLSLink.pair()
        XCTAssertTrue(link.run(), "client \(link.client.state), server \(link.server.state)")
        let clientKeys = try XCTUnwrap(link.client.keyingMaterial)
        let serverKeys = try XCTUnwrap(link.server.keyingMaterial)
        XCTAssertEqual(clientKeys, serverKeys)
        XCTAssertEqual(clientKeys.profile, .aeadAES128GCM, "GCM is preferred")
        XCTAssertEqual(clientKeys.clientWrite.key.count, 16)
        XCTAssertEqual(clientKeys.clientWrite.salt.count, 12)
        // Client write key == server read key: what the client sends with is what the server checks with.
        XCTAssertEqual(clientKeys.writeKey(of: .client), serverKeys.writeKey(of: .client))
        XCTAssertEqual(clientKeys.writeKey(of: .server), clientKeys.serverWrite)
        XCTAssertEqual(clientKeys.writeKey(of: .client), clientKeys.clientWrite)
        XCTAssertNotEqual(clientKeys.clientWrite, clientKeys.serverWrite)
        XCTAssertEqual(link.client.peerFingerprint?.value.count, 32 * 3 - 1)
        XCTAssertEqual(link.clientErrors, [])
        XCTAssertEqual(link.serverErrors, [])
        XCTAssertLessThanOrEqual(link.largestDatagram, 1200)
        XCTAssertNil(link.client.nextTimeout, "nothing left to retransmit")
        XCTAssertNil(link.server.nextTimeout, "the server's last flight is resent only when the client asks again")
        XCTAssertFalse("\(clientKeys)".contains(clientKeys.clientWrite.key.map { String($0) }.joined()), "keys are not printed")
    }

    func testEachSRTPProfileCanBeNegotiated() throws {
        // The server's order decides; a client offering only CM gets CM.
        let link = try DTLSLink.pair { $0.srtpProfiles = $0.role == .client ? [.aes128CMHMACSHA1_80] : [.aeadAES128GCM, .aes128CMHMACSHA1_80] }
        XCTAssertTrue(link.run())
        let keys = try XCTUnwrap(link.server.keyingMaterial)
        XCTAssertEqual(keys.profile, .aes128CMHMACSHA1_80)
        XCTAssertEqual(keys.clientWrite.salt.count, 14)
        XCTAssertEqual(link.client.keyingMaterial, keys)

        let preferCM = try DTLSLink.pair { $0.srtpProfiles = $0.role == .server ? [.aes128CMHMACSHA1_80, .aeadAES128GCM] : [.aeadAES128GCM, .aes128CMHMACSHA1_80] }
        XCTAssertTrue(preferCM.run())
        XCTAssertEqual(preferCM.client.keyingMaterial?.profile, .aes128CMHMACSHA1_80, "the server's preference wins")
    }

    func testNoCommonSRTPProfileFails() throws {
        let link = try DTLSLink.pair { $0.srtpProfiles = $0.role == .client ? [.aes128CMHMACSHA1_80] : [.aeadAES128GCM] }
        link.run(until: { $0.bothEnded || $0.bothConnected })
        XCTAssertFalse(link.bothConnected)
        // The server finds no profile in the ClientHello and finishes without use_srtp; the client's check
        // catches that at the end.
        XCTAssertEqual(link.client.state.failure ?? link.server.state.failure, DTLSError.noCommonSRTPProfile)
    }

    func testHandshakeSurvivesThirtyPercentLoss() throws {
        for seed in [1, 2, 3, 4] as [UInt64] {
            let link = try DTLSLink.pair {
                $0.initialRetransmissionMicros = 30_000
                $0.maximumRetransmissionMicros = 240_000
            }
            link.lossRate = 0.3
            link.generator = SeededGenerator(seed: seed)
            let started = DTLSLink.now()
            XCTAssertTrue(link.run(limit: 30), "seed \(seed): client \(link.client.state), server \(link.server.state)")
            XCTAssertEqual(link.client.keyingMaterial, link.server.keyingMaterial, "seed \(seed)")
            XCTAssertGreaterThan(link.lost, 0, "seed \(seed) lost nothing")
            XCTAssertGreaterThan(link.timeoutsHandled, 0)
            XCTAssertEqual(link.clientErrors + link.serverErrors, [], "seed \(seed)")
            print("DTLS 30% loss seed \(seed): \(link.sent) datagrams, \(link.lost) lost, \(link.timeoutsHandled) timeouts, "
                  + "\((DTLSLink.now() - started) / 1000) ms")
        }
    }

    /// Losing any one datagram of the lossless exchange (ClientHello, the server's flight, the client's
    /// flight, the server's final CCS/Finished), or any two, is repaired by retransmission.
    func testEveryLostDatagramIsRetransmitted() throws {
        let lossless = try DTLSLink.pair()
        XCTAssertTrue(lossless.run())
        let count = lossless.sent
        XCTAssertGreaterThanOrEqual(count, 4)
        var plans: [Set<Int>] = (0..<count).map { [$0] }
        for first in 0..<count { for second in first + 1..<count + 2 { plans.append([first, second]) } }
        for plan in plans {
            let link = try DTLSLink.pair {
                $0.initialRetransmissionMicros = 20_000
                $0.maximumRetransmissionMicros = 80_000
            }
            link.drop = { index, _ in plan.contains(index) }
            XCTAssertTrue(link.run(limit: 10), "dropping \(plan.sorted()): client \(link.client.state), server \(link.server.state)")
            XCTAssertEqual(link.client.keyingMaterial, link.server.keyingMaterial, "dropping \(plan.sorted())")
            XCTAssertEqual(link.clientErrors + link.serverErrors, [])
        }
    }

    /// One shared certificate (``DTLSCertificate/shared()``) serves endpoints on several threads at once.
    func testHandshakesOnSeveralThreadsShareOneCertificate() throws {
        let certificate = try DTLSCertificate.shared()
        let results = Mutex<[Bool]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let connected = (try? DTLSLink(
                client: DTLSConfiguration(role: .client, certificate: certificate, remoteFingerprints: [certificate.fingerprint]),
                server: DTLSConfiguration(role: .server, certificate: certificate, remoteFingerprints: [certificate.fingerprint])
            ).run()) ?? false
            results.withLock { $0.append(connected) }
        }
        XCTAssertEqual(results.withLock { $0 }, [true, true, true, true])
    }

    func testServerRejectsAClientCertificateThatDoesNotMatchItsFingerprint() throws {
        let stranger = try DTLSCertificate.generate(commonName: "stranger").fingerprint
        let link = try DTLSLink.pair(serverExpects: stranger)
        link.run(until: { $0.bothEnded })
        guard case .fingerprintMismatch(let expected, let received) = link.server.state.failure else {
            return XCTFail("server: \(link.server.state)")
        }
        XCTAssertEqual(expected, [stranger])
        XCTAssertNotNil(received)
        XCTAssertFalse(received!.matches(stranger))
        XCTAssertEqual(link.serverErrors, [link.server.state.failure!])
        XCTAssertNil(link.server.keyingMaterial)
        // The client learns from the server's alert.
        guard case .handshake(let reason) = link.client.state.failure else { return XCTFail("client: \(link.client.state)") }
        XCTAssertTrue(reason.contains("alert bad certificate"), reason)
        XCTAssertTrue(link.server.state.failure!.isPeerError)
    }

    func testClientRejectsAServerCertificateThatDoesNotMatchItsFingerprint() throws {
        let stranger = try DTLSCertificate.generate().fingerprint
        let link = try DTLSLink.pair(clientExpects: stranger)
        link.run(until: { $0.bothEnded })
        guard case .fingerprintMismatch(let expected, _) = link.client.state.failure else {
            return XCTFail("client: \(link.client.state)")
        }
        XCTAssertEqual(expected, [stranger])
        XCTAssertNil(link.client.keyingMaterial)
        XCTAssertNil(link.server.keyingMaterial)
        XCTAssertNotNil(link.server.state.failure, "the server gets the alert: \(link.server.state)")
    }

    func testFingerprintsAreComparedWithoutRegardToCase() throws {
        let serverCertificate = try DTLSCertificate.generate()
        let lower = try Fingerprint(sdpValue: "SHA-256 " + serverCertificate.fingerprint.value.lowercased())
        let link = try DTLSLink.pair(clientExpects: lower)
        XCTAssertFalse(link.run(limit: 5), "a different certificate than the one pinned")
        // Pin the server's real certificate in lowercase.
        let clientCertificate = try DTLSCertificate.generate()
        let pinned = try DTLSLink(
            client: DTLSConfiguration(role: .client, certificate: clientCertificate, remoteFingerprints: [lower]),
            server: DTLSConfiguration(role: .server, certificate: serverCertificate, remoteFingerprints: [clientCertificate.fingerprint]))
        XCTAssertTrue(pinned.run(), "\(pinned.client.state)")
    }

    func testTheStrongestOfSeveralFingerprintsIsChecked() throws {
        let clientCertificate = try DTLSCertificate.generate()
        let serverCertificate = try DTLSCertificate.generate()
        // A wrong sha-256 beside the right sha-512: only the sha-512 is checked (RFC 8122 §5), so it passes.
        let wrong256 = try DTLSCertificate.generate().fingerprint
        let right512 = try XCTUnwrap(serverCertificate.fingerprint(algorithm: "sha-512"))
        let link = try DTLSLink(
            client: DTLSConfiguration(role: .client, certificate: clientCertificate, remoteFingerprints: [wrong256, right512]),
            server: DTLSConfiguration(role: .server, certificate: serverCertificate, remoteFingerprints: [clientCertificate.fingerprint]))
        XCTAssertTrue(link.run(), "\(link.client.state)")
        XCTAssertEqual(link.client.peerFingerprint, right512)
        // Unknown hash functions alone are refused up front.
        XCTAssertThrowsError(try DTLSEndpoint(configuration: DTLSConfiguration(
            role: .client, certificate: clientCertificate, remoteFingerprints: [Fingerprint(algorithm: "md5", value: "00:11")])))
    }

    func testHandshakeTimesOutOnTheInjectedClock() throws {
        let certificate = try DTLSCertificate.generate()
        let client = try DTLSEndpoint(configuration: DTLSConfiguration(
            role: .client, certificate: certificate, remoteFingerprints: [certificate.fingerprint],
            handshakeTimeoutMicros: 5_000_000))
        try client.start(nowMicros: 1_000)
        XCTAssertEqual(client.takeDatagrams().count, 1, "the ClientHello")
        let next = try XCTUnwrap(client.nextTimeout)
        XCTAssertLessThanOrEqual(next, 1_000 + 1_000_000, "the first retransmission is due within 1 s")
        XCTAssertNoThrow(try client.handleTimeout(nowMicros: 4_000_000))
        XCTAssertThrowsError(try client.handleTimeout(nowMicros: 5_001_000)) { error in
            XCTAssertEqual(error as? DTLSError, DTLSError.timedOut)
        }
        XCTAssertEqual(client.state, .failed(DTLSError.timedOut))
        XCTAssertNil(client.nextTimeout)
    }

    func testCloseNotifyClosesThePeer() throws {
        let link = try DTLSLink.pair()
        XCTAssertTrue(link.run())
        link.client.close()
        XCTAssertEqual(link.client.state, .closed(byPeer: false))
        let alerts = link.client.takeDatagrams()
        XCTAssertEqual(alerts.count, 1)
        XCTAssertEqual(alerts.first?.first, 21, "an alert record")
        try link.server.receive(alerts[0], nowMicros: DTLSLink.now())
        XCTAssertEqual(link.server.state, .closed(byPeer: true))
        XCTAssertEqual(link.server.takeDatagrams().first?.first, 21, "answered with our close_notify")
        link.client.close()
        XCTAssertEqual(link.client.takeDatagrams(), [], "idempotent")
    }

    func testDatagramsRespectTheMTU() throws {
        let link = try DTLSLink.pair { $0.mtu = 300 }
        XCTAssertTrue(link.run(), "\(link.client.state) \(link.server.state)")
        XCTAssertLessThanOrEqual(link.largestDatagram, 300)
        XCTAssertEqual(link.client.keyingMaterial, link.server.keyingMaterial)
    }
}
