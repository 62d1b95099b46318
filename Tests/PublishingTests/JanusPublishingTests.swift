import DTLS
import Foundation
import Glibc
import ICE
import PeerConnection
import Publishing
import ScreencastSupport
import XCTest

/// Publishing into a real Janus VideoRoom (``JanusHarness``: Debian janus in a loopback-only namespace,
/// our host candidate 127.0.0.2).
final class JanusPublishingTests: XCTestCase {
    let room: UInt64 = 4242

    /// Our own look into the room through the Janus HTTP API: `listparticipants` from a second session.
    func publishers() throws -> [String] {
        let participants = try JanusHarness.videoRoom(["request": "listparticipants", "room": room])["participants"] as? [[String: Any]] ?? []
        return participants.filter { $0["publisher"] as? Bool == true }.compactMap { $0["display"] as? String }
    }

    func publisher(createRoom: Bool) throws -> (SFUPublisher, Counter) {
        var options = JanusVideoRoom.Options(url: JanusHarness.apiURL, room: room)
        options.createRoom = createRoom
        options.display = "screencast-test"
        options.bitrate = 1_000_000
        let configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.2"], failedGracePeriod: .seconds(2)),
            certificate: try DTLSCertificate.shared())
        let keyframes = Counter()
        let publisher = SFUPublisher(
            transport: try JanusVideoRoom(options: options), configuration: configuration,
            logger: Logger(component: "test", threshold: .warning), hooks: .init(requestKeyframe: { keyframes.add() }))
        return (publisher, keyframes)
    }

    /// Create the room (VP8, 1 Mbit/s cap), join as publisher with our offer, get Janus's answer
    /// (`a=setup:active`: we are the DTLS server), media flows; Janus's REMB is the room's cap. Then
    /// SIGKILL Janus and restart it: we re-publish within the schedule, re-creating the room, starting
    /// with a keyframe request; stop leaves the room empty.
    func testPublishesIntoARoomWeCreateAndComesBackAfterJanusIsKilled() throws {
        guard JanusHarness.isInside else {
            return try JanusHarness.rerunInNamespace(
                "PublishingTests.JanusPublishingTests/testPublishesIntoARoomWeCreateAndComesBackAfterJanusIsKilled", timeout: 90)
        }
        let janus = try JanusHarness()
        defer { janus.stop() }
        try janus.start()
        let (publisher, keyframes) = try publisher(createRoom: true)
        publisher.start()
        defer { publisher.stop() }
        let feeder = FrameFeeder(publisher, keyframes: keyframes)
        feeder.start()
        defer { feeder.stop() }
        waitFor(15, "published into Janus") { publisher.stats.state == .published }
        waitFor(10, "Janus lists us as a publisher") { (try? self.publishers()) == ["screencast-test"] }
        waitFor(10, "Janus's REMB") { publisher.stats.bitrateCeiling != nil }
        XCTAssertEqual(publisher.stats.bitrateCeiling, 1_000_000, "REMB carries the room's cap")
        XCTAssertGreaterThanOrEqual(keyframes.value, 1)
        print("janus: published after \(publisher.stats.framesSent) frames; REMB \(publisher.stats.bitrateCeiling ?? 0)")

        janus.kill()
        let killed = Date()
        waitFor(30, "the leg noticed Janus is gone") { publisher.stats.state != .published }
        print("janus: drop noticed after \(String(format: "%.1f", Date().timeIntervalSince(killed))) s: \(publisher.stats.lastReason ?? "-")")
        let keyframesBefore = keyframes.value
        try janus.start()
        let restarted = Date()
        waitFor(20, "published again") { publisher.stats.state == .published }
        print("janus: re-published \(String(format: "%.1f", Date().timeIntervalSince(restarted))) s after the restart; reconnects \(publisher.stats.reconnects)")
        waitFor(10, "Janus lists us again (the room re-created)") { (try? self.publishers()) == ["screencast-test"] }
        XCTAssertGreaterThan(keyframes.value, keyframesBefore, "the new leg asked for a keyframe")
        XCTAssertGreaterThanOrEqual(publisher.stats.reconnects, 1)
        publisher.stop()
        XCTAssertEqual(try publishers(), [], "stop unpublished and left")
    }

    /// A room that does not exist, without --janus-create-room: VideoRoom error 426, not retried.
    func testAMissingRoomIsATypedErrorWithItsCode() throws {
        guard JanusHarness.isInside else {
            return try JanusHarness.rerunInNamespace("PublishingTests.JanusPublishingTests/testAMissingRoomIsATypedErrorWithItsCode", timeout: 60)
        }
        let janus = try JanusHarness()
        defer { janus.stop() }
        try janus.start()
        let (publisher, _) = try publisher(createRoom: false)
        publisher.start()
        defer { publisher.stop() }
        waitFor(15, "failed") { publisher.stats.state == .failed }
        XCTAssertEqual(publisher.stats.lastReason, "VideoRoom error 426: No such room (4242)")
    }
}

/// A Janus that never answers (a listening socket nobody reads: the connection is accepted by the kernel,
/// no reply ever comes): each attempt ends at the HTTP time limit with libcurl's words, and the leg retries
/// on the schedule (at once, then 2 s), never stuck.
final class SilentJanusTests: XCTestCase {
    func testASilentJanusTimesOutAndIsRetriedOnTheSchedule() throws {
        let silent = try SilentServer()
        defer { withExtendedLifetime(silent) {} }
        let port = silent.port
        var limits = HTTPClient.Limits()
        limits.timeoutMillis = 500
        let options = JanusVideoRoom.Options(url: "http://127.0.0.1:\(port)/janus", room: 7)
        let publisher = SFUPublisher(
            transport: try JanusVideoRoom(options: options, http: HTTPClient(limits: limits)),
            configuration: PeerConnection.Configuration(
                ice: ICEAgent.Configuration(role: .controlling, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.shared()),
            logger: Logger(component: "test", threshold: .error), hooks: .init(requestKeyframe: {}))
        publisher.start()
        defer { publisher.stop() }
        waitFor(15, "two attempts timed out") { publisher.stats.reconnects >= 2 }
        let stats = publisher.stats
        XCTAssertEqual(stats.state, .reconnecting)
        XCTAssertTrue(stats.lastReason?.contains("Timeout was reached") == true, stats.lastReason ?? "-")
        XCTAssertTrue(stats.lastReason?.contains("http://127.0.0.1:\(port)/janus") == true, stats.lastReason ?? "-")
    }
}

/// Frames every 33 ms on a thread of its own (a keyframe whenever one was asked for).
final class FrameFeeder: Sendable {
    private let publisher: SFUPublisher
    private let keyframes: Counter
    private let stopped = Counter()
    private let done = DispatchSemaphore(value: 0)

    init(_ publisher: SFUPublisher, keyframes: Counter) {
        self.publisher = publisher
        self.keyframes = keyframes
    }

    func start() {
        Thread.detachNewThread { [self] in
            var served = 0
            var index = 0
            while stopped.value == 0 {
                let wanted = keyframes.value
                let keyframe = wanted > served || index == 0
                served = wanted
                var bytes = [UInt8](repeating: UInt8(index & 0xFF), count: keyframe ? 8_000 : 1_200)
                bytes[0] = keyframe ? 0x50 : 0x51
                publisher.consume(.init(bytes: bytes, isKeyframe: keyframe, captureTimestampMicros: MonotonicClock.nowMicros(), width: 64, height: 64))
                index += 1
                usleep(33_000)
            }
            done.signal()
        }
    }

    func stop() {
        guard stopped.value == 0 else { return }
        stopped.add()
        done.wait()
    }
}
