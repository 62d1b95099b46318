import DTLS
import ICE
import Media
import PeerConnection
import Publishing
import ScreencastSupport
import Synchronization
import XCTest

/// A count shared between threads.
final class Counter: Sendable {
    private let mutex = Mutex(0)
    func add() { mutex.withLock { $0 += 1 } }
    var value: Int { mutex.withLock { $0 } }
}

/// Publishing over WHIP to ``TestWHIPServer`` (our own answerer behind libmicrohttpd) on 127.0.0.1: real
/// HTTP through libcurl, real ICE (libnice), DTLS (OpenSSL) and SRTP.
final class WHIPPublishingTests: XCTestCase {
    let logger = Logger(component: "test", threshold: .error)

    func configuration() throws -> PeerConnection.Configuration {
        PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.shared())
    }

    func publisher(_ server: TestWHIPServer, token: String? = "s3cret", keyframes: Counter) throws -> SFUPublisher {
        let client = try WHIPClient(endpoint: server.url, token: token)
        return SFUPublisher(
            transport: WHIPTransport(client: client), configuration: try configuration(), logger: logger,
            hooks: .init(requestKeyframe: { keyframes.add() }))
    }

    /// Frames every 33 ms (a keyframe whenever asked) until `stop` says so.
    func feed(_ publisher: SFUPublisher, keyframes: Counter, until stop: () -> Bool) {
        var index = 0
        var served = 0
        while !stop(), index < 600 {
            let wanted = keyframes.value
            let keyframe = wanted > served
            served = wanted
            var bytes = [UInt8](repeating: UInt8(index & 0xFF), count: keyframe ? 8_000 : 1_200)
            bytes[0] = keyframe ? 0x50 : 0x51
            publisher.consume(EncodedFrame(
                bytes: bytes, isKeyframe: keyframe, captureTimestampMicros: MonotonicClock.nowMicros(), width: 64, height: 64))
            index += 1
            usleep(33_000)
        }
    }

    /// POST (Bearer token, 307 followed) → 201 → ICE + DTLS up in our offerer's DTLS client role (our
    /// answerer says passive) → SRTP reaches the server; stop sends DELETE on the resolved Location.
    func testPublishesThroughARedirectAndDeletesOnStop() throws {
        let server = try TestWHIPServer()
        defer { server.stop() }
        let keyframes = Counter()
        let publisher = try publisher(server, keyframes: keyframes)
        publisher.start()
        defer { publisher.stop() }
        waitFor(15, "published") { publisher.stats.state == SFUPublisher.LegState.published && server.state.withLock { $0.connected } == 1 }
        feed(publisher, keyframes: keyframes) { (server.snapshot("s1")?.droppedDatagrams.rtp ?? 0) >= 30 }
        let received = try XCTUnwrap(server.snapshot("s1"))
        XCTAssertGreaterThanOrEqual(received.droppedDatagrams.rtp, 30, "SRTP packets reached the server")
        XCTAssertEqual(received.state, .connected)
        XCTAssertEqual(received.dtlsRole, .server, "the answerer is DTLS server, so our offerer was the client")
        XCTAssertGreaterThanOrEqual(keyframes.value, 1, "a keyframe was asked for the new leg")
        XCTAssertGreaterThan(publisher.stats.framesSent, 0)
        publisher.stop()
        XCTAssertEqual(publisher.stats.state, .stopped)
        XCTAssertEqual(server.state.withLock { $0.deletes }, ["s1"])
        XCTAssertEqual(server.state.withLock { $0.posts }, 1)
    }

    /// The server ends the session (close_notify, as a restarting SFU does): we POST again at once and are
    /// published again; the reconnect is counted with its reason.
    func testReconnectsAtOnceWhenTheServerDropsTheSession() throws {
        let server = try TestWHIPServer()
        defer { server.stop() }
        let keyframes = Counter()
        let publisher = try publisher(server, keyframes: keyframes)
        publisher.start()
        defer { publisher.stop() }
        waitFor(15, "published") { publisher.stats.state == SFUPublisher.LegState.published }
        server.drop("s1")
        waitFor(15, "published again") { server.state.withLock { $0.connected } == 2 && publisher.stats.state == SFUPublisher.LegState.published }
        let stats = publisher.stats
        XCTAssertEqual(stats.reconnects, 1)
        XCTAssertEqual(stats.lastReason, "DTLS close_notify from the peer")
        XCTAssertEqual(server.state.withLock { $0.posts }, 2)
        XCTAssertEqual(server.state.withLock { $0.deletes }, ["s1"], "the dropped session was deleted too (404 is fine)")
        XCTAssertGreaterThanOrEqual(keyframes.value, 2, "each leg asked for its keyframe")
    }

    /// HTTP errors carry status and body; a 4xx other than 404/408/429 is not retried, a 5xx is.
    func testHTTPErrorsAreReportedWithStatusAndBody() throws {
        let server = try TestWHIPServer()
        defer { server.stop() }
        let client = try WHIPClient(endpoint: server.url, token: "wrong")
        XCTAssertThrowsError(try client.publish(offer: "v=0\r\n")) { error in
            XCTAssertEqual(error as? PublishingError, .httpStatus(method: "POST", url: server.url, status: 401, body: "bad token"))
            XCTAssertEqual((error as? PublishingError)?.isRetryable, false)
        }
        let good = try WHIPClient(endpoint: server.url, token: "s3cret")
        let ingest = server.url.replacingOccurrences(of: "/whip", with: "/ingest")
        XCTAssertThrowsError(try good.publish(offer: "garbage")) { error in
            guard case .httpStatus("POST", ingest, 400, let body)? = error as? PublishingError else { return XCTFail("\(error)") }
            XCTAssertTrue(body.hasPrefix("SDP"), body)
        }
        server.state.withLock { $0.failWith = (503, "overloaded") }
        XCTAssertThrowsError(try good.publish(offer: "v=0\r\n")) { error in
            XCTAssertEqual(error as? PublishingError, .httpStatus(method: "POST", url: ingest, status: 503, body: "overloaded"))
            XCTAssertEqual((error as? PublishingError)?.isRetryable, true)
        }
        // A publisher with the wrong token gives up after the first attempt, saying why.
        let keyframes = Counter()
        let publisher = try publisher(server, token: "wrong", keyframes: keyframes)
        publisher.start()
        waitFor(10, "failed") { publisher.stats.state == SFUPublisher.LegState.failed }
        XCTAssertEqual(publisher.stats.lastReason, "POST \(server.url): HTTP 401: bad token")
        publisher.stop()
        // Nothing listening: a transport error in libcurl's words, retryable.
        let closed = try WHIPClient(endpoint: "http://127.0.0.1:9/whip")
        XCTAssertThrowsError(try closed.publish(offer: "v=0\r\n")) { error in
            guard case .transport(_, let reason)? = error as? PublishingError else { return XCTFail("\(error)") }
            XCTAssertEqual(reason, "Couldn't connect to server")
        }
        XCTAssertThrowsError(try WHIPClient(endpoint: "ftp://x")) { error in
            XCTAssertEqual(error as? PublishingError, .invalidConfiguration("--whip needs an http:// or https:// URL with a host and no spaces, not 'ftp://x': the scheme must be http or https"))
        }
    }

    /// A garbage answer and an answer without VP8: the SDP error in words, not retried (the same server
    /// would answer the same), and the session is DELETEd.
    func testUnusableAnswersAreClearErrors() throws {
        let server = try TestWHIPServer()
        defer { server.stop() }
        let cases = [
            ("hello", "SDP"),
            // Not even an answer: the resource the 201 made is deleted all the same (a break-it trial found it left behind).
            ("", "http://127.0.0.1:\(server.server.port)/ingest: WHIP: the answer is empty or not UTF-8"),
            ("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\n"
                + "a=rtcp-mux\r\na=recvonly\r\na=rtpmap:96 H264/90000\r\n", "unusable answer: the answer has no VP8/90000 format"),
        ]
        for (index, (answer, reason)) in cases.enumerated() {
            server.state.withLock { $0.answerOverride = answer }
            let publisher = try publisher(server, keyframes: Counter())
            publisher.start()
            waitFor(10, "failed") { publisher.stats.state == SFUPublisher.LegState.failed }
            XCTAssertTrue(publisher.stats.lastReason?.hasPrefix(reason) == true, publisher.stats.lastReason ?? "-")
            publisher.stop()
            XCTAssertEqual(server.state.withLock { $0.deletes.count }, index + 1, "the session was deleted")
        }
    }
}

/// Stopping the leg ends a WHIP request in flight at once (``HTTPCancellation``), instead of at libcurl's
/// 10 s timeout: a server that takes the connection and never answers (a listening socket nobody accepts
/// from: the kernel completes the handshake) held SIGTERM for 8 s in a break-it trial.
final class WHIPStopTests: XCTestCase {
    func testStopEndsAPOSTInFlight() throws {
        let silent = try SilentServer()
        defer { withExtendedLifetime(silent) {} }
        let port = silent.port
        let client = try WHIPClient(endpoint: "http://127.0.0.1:\(port)/whip")
        let publisher = SFUPublisher(
            transport: WHIPTransport(client: client),
            configuration: PeerConnection.Configuration(
                ice: ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.shared()),
            logger: Logger(component: "test", threshold: .error), hooks: .init(requestKeyframe: {}))
        publisher.start()
        waitFor(10, "the POST is in flight") { publisher.stats.state == SFUPublisher.LegState.connecting }
        usleep(500_000)
        let started = Date()
        publisher.stop()
        let took = Date().timeIntervalSince(started)
        XCTAssertLessThan(took, 5, "stop waited \(took) s: the POST was not cancelled (its timeout is 10 s)")
        XCTAssertEqual(publisher.stats.state, .stopped)
    }

    /// A cancellation ends only what is in flight: a request made after it runs.
    func testACancellationEndsOnlyWhatIsInFlight() throws {
        let http = HTTPClient()
        let before = http.cancellation.generation
        http.cancellation.cancelInFlight()
        XCTAssertEqual(http.cancellation.generation, before + 1)
        let copy = http
        XCTAssertTrue(copy.cancellation === http.cancellation, "copies share it")
        // Nothing listens on port 9 (discard): the request runs (and is refused), it is not "cancelled".
        XCTAssertThrowsError(try http.request("GET", "http://127.0.0.1:9/")) { error in
            guard case .transport(_, let reason)? = error as? PublishingError else { return XCTFail("\(error)") }
            XCTAssertNotEqual(reason, "cancelled")
        }
    }
}
