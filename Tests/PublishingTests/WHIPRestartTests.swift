import DTLS
import Foundation
import ICE
import Media
import PeerConnection
import Publishing
import ScreencastSupport
import Synchronization
import XCTest

/// ICE restart of the SFU leg over WHIP (RFC 9725 §4.3.3) against ``TestWHIPServer`` with a real restart
/// on its side: the publisher's path to the server runs through a ``UDPRelay`` that is then killed, so our
/// consent lapses for real (RFC 7675: no RTCP from the server; the limit shortened to 5 s here). Each test
/// takes 8–20 s.
final class WHIPRestartTests: XCTestCase {
    let logger = Logger(component: "test", threshold: ProcessInfo.processInfo.environment["SFU_DEBUG"] == nil ? .error : .info)

    func publisher(_ server: TestWHIPServer, keyframes: Counter) throws -> SFUPublisher {
        // Consent lapses 5 s after the server's last report (30 s in the product); the leg has 15 s to restart.
        var configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.1"], failedGracePeriod: .seconds(15)),
            certificate: try DTLSCertificate.shared())
        configuration.consentLimitMicros = 5_000_000
        return SFUPublisher(
            transport: WHIPTransport(client: try WHIPClient(endpoint: server.url, token: "s3cret")), configuration: configuration,
            logger: logger, hooks: .init(requestKeyframe: { keyframes.add() }))
    }

    /// A publisher fed frames, published to `server` (its first session connected).
    func startLeg(_ server: TestWHIPServer) throws -> (SFUPublisher, Feeder, Counter) {
        let keyframes = Counter()
        let publisher = try publisher(server, keyframes: keyframes)
        let feeder = Feeder(publisher, keyframes: keyframes)
        publisher.start()
        waitFor(15, "published") { publisher.stats.state == .published && server.state.withLock { $0.connected } == 1 }
        return (publisher, feeder, keyframes)
    }

    /// The path dies; our ICE fails; we PATCH the session with our new credentials and candidates and
    /// `If-Match: *`; the server restarts its ICE and answers; the leg is back on the same session (no
    /// second POST, no second DTLS handshake: the server's peer stayed connected), a keyframe was asked
    /// for the new path, and SRTP reaches the server again.
    func testFailedICEIsRestartedByPATCHOnTheSameSession() throws {
        let server = try TestWHIPServer(relayed: true)
        defer { server.stop() }
        let (publisher, feeder, keyframes) = try startLeg(server)
        defer {
            feeder.stop()
            publisher.stop()
        }
        waitFor(10, "media through the relay") { (server.snapshot("s1")?.droppedDatagrams.rtp ?? 0) >= 30 }
        let credentials = try XCTUnwrap(server.state.withLock { $0.peers["s1"] }?.negotiated.remote.iceUfrag)

        server.breakPath("s1")
        waitFor(30, "the PATCH") { server.state.withLock { $0.patches.count } == 1 }
        waitFor(25, "the restarted leg") { publisher.stats.iceRestartsSucceeded == 1 && publisher.stats.state == .published }
        let keyframesAfterRestart = keyframes.value
        let rtpAfterRestart = server.snapshot("s1")?.droppedDatagrams.rtp ?? 0
        waitFor(10, "media on the new path") { (server.snapshot("s1")?.droppedDatagrams.rtp ?? 0) >= rtpAfterRestart + 30 }

        let patch = try XCTUnwrap(server.state.withLock { $0.patches.first })
        XCTAssertEqual(patch.id, "s1")
        XCTAssertEqual(patch.ifMatch, "*", "RFC 9725 §4.3.3, RFC 9110 §13.1.1: a restart PATCH matches any entity")
        XCTAssertNotNil(patch.ufrag)
        XCTAssertNotEqual(patch.ufrag, credentials, "new credentials")
        let stats = publisher.stats
        XCTAssertEqual(stats.iceRestarts, 1)
        XCTAssertEqual(stats.reconnects, 0, "no new session")
        XCTAssertEqual(server.state.withLock { $0.posts }, 1)
        XCTAssertEqual(server.state.withLock { $0.connected }, 1, "no second DTLS handshake")
        XCTAssertEqual(server.snapshot("s1")?.state, .connected)
        XCTAssertGreaterThanOrEqual(keyframesAfterRestart, 2, "a keyframe for the first leg and one for the restarted path")
        XCTAssertGreaterThan(feeder.keyframesSent, 1)
        publisher.stop()
        XCTAssertEqual(server.state.withLock { $0.deletes }, ["s1"])
    }

    /// A server that refuses the restart (405: no PATCH, as many WHIP servers): the leg falls back to a
    /// new POST at once, the reason names the PATCH's status, and the new session carries media.
    func testARefusedRestartFallsBackToANewPOST() throws {
        let server = try TestWHIPServer(relayed: true)
        defer { server.stop() }
        server.state.withLock { $0.patchFailure = (405, "no PATCH here") }
        let (publisher, feeder, _) = try startLeg(server)
        defer {
            feeder.stop()
            publisher.stop()
        }
        server.breakPath("s1")
        waitFor(35, "the second session") { server.state.withLock { $0.connected } == 2 && publisher.stats.state == .published }
        waitFor(10, "media on the new session") { (server.snapshot("s2")?.droppedDatagrams.rtp ?? 0) >= 30 }
        let stats = publisher.stats
        XCTAssertEqual(server.state.withLock { $0.patches.map(\.id) }, ["s1"])
        XCTAssertEqual(server.state.withLock { $0.posts }, 2)
        XCTAssertEqual(stats.iceRestarts, 1)
        XCTAssertEqual(stats.iceRestartsSucceeded, 0)
        XCTAssertEqual(stats.reconnects, 1)
        let reason = try XCTUnwrap(stats.lastReason)
        XCTAssertTrue(reason.hasPrefix("ICE restart 1 failed: PATCH http://127.0.0.1:") && reason.hasSuffix("/ingest/resources/s1: HTTP 405: no PATCH here"), reason)
        XCTAssertEqual(server.state.withLock { $0.deletes }.first, "s1", "the refused session was ended")
    }
}

/// Frames every 33 ms on a thread of its own (a keyframe whenever asked), as the encoder does.
final class Feeder: @unchecked Sendable {
    // @unchecked Sendable: `publisher` is thread-safe; the counts are Mutexes.
    private let stopped = Mutex(false)
    private let sent = Mutex(0)
    private let done = DispatchSemaphore(value: 0)

    init(_ publisher: SFUPublisher, keyframes: Counter) {
        let thread = Thread { [self] in
            var served = 0, index = 0
            while !stopped.withLock({ $0 }) {
                let wanted = keyframes.value
                let keyframe = wanted > served
                served = wanted
                var bytes = [UInt8](repeating: UInt8(index & 0xFF), count: keyframe ? 8_000 : 1_200)
                bytes[0] = keyframe ? 0x50 : 0x51
                publisher.consume(EncodedFrame(bytes: bytes, isKeyframe: keyframe, captureTimestampMicros: MonotonicClock.nowMicros(), width: 64, height: 64))
                if keyframe { sent.withLock { $0 += 1 } }
                index += 1
                usleep(33_000)
            }
            done.signal()
        }
        thread.start()
    }

    var keyframesSent: Int { sent.withLock { $0 } }

    func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        done.wait()
    }
}
