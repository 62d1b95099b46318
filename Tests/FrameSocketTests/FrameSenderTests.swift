import Foundation
import FrameWire
import Glibc
import XCTest

@testable import FrameSocket

/// The agent-side client: one frame in flight, newest wins, reconnect with back-off, no SIGPIPE.
final class FrameSenderTests: SocketTestCase {
    private func makeServer(_ path: SocketPath, _ events: EventRecorder) -> FrameServer {
        FrameServer(path: path, logger: logger("server"), onEvent: events.handler)
    }

    func testRoundTripDeliversHeaderFieldsAndBodies() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        let sender = try FrameSender(path: path, logger: logger("sender"))
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.isConnected })

        let header = FrameHeader(
            contentLength: 3, bufferWidth: 1920, bufferHeight: 1080, orientation: 6,
            timestampMicros: 123_456_789, sequence: 42)
        let body: [UInt8] = [0xFF, 0xD8, 0xFF]
        try sender.send(FrameEncoder.encode(header: header, body: body))
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })
        let frame = try XCTUnwrap(events.frames.first?.0)
        XCTAssertEqual(frame.header.contentLength, 3)
        XCTAssertEqual(frame.header.bufferWidth, 1920)
        XCTAssertEqual(frame.header.bufferHeight, 1080)
        XCTAssertEqual(frame.header.orientation, 6)
        XCTAssertEqual(frame.header.rotation, .clockwise270)
        XCTAssertEqual(frame.header.timestampMicros, 123_456_789)
        XCTAssertEqual(frame.header.sequence, 42)
        XCTAssertEqual(frame.body, body)
        XCTAssertEqual(frame.offset, 0)

        let stats = sender.stats
        XCTAssertEqual(stats.sentFrames, 1)
        XCTAssertEqual(stats.sentBytes, FrameEncoder.encode(header: header, body: body).count)
        XCTAssertEqual(stats.droppedFrames, 0)
        XCTAssertEqual(stats.connects, 1)
        XCTAssertEqual(stats.bufferedBytes, 0)
        sender.close()
        sender.close()
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        XCTAssertEqual(events.ended.first?.1, .stream(.eof))
        server.stop()
    }

    /// A short run asks the sender to have tried the socket once before it decides anything: with nobody
    /// listening the reason is the connect's own error; with a server listening the sender is connected, so a
    /// frame offered at once is flushed, not dropped by an early close.
    func testTheFirstConnectAttemptIsAwaited() throws {
        let absent = try socketPath("nobody.sock")
        let lonely = try FrameSender(path: absent, logger: logger("sender"))
        XCTAssertTrue(lonely.waitForFirstConnectAttempt(timeout: .seconds(5)))
        XCTAssertEqual(lonely.stats.connects, 0)
        XCTAssertEqual(lonely.stats.lastConnectFailure, "No such file or directory (\(absent))")
        lonely.close()

        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        defer { server.stop() }
        let sender = try FrameSender(path: path, logger: logger("sender"))
        sender.offer(message(sequence: 7, bodyBytes: 100).2)
        XCTAssertTrue(sender.waitForFirstConnectAttempt(timeout: .seconds(5)))
        XCTAssertTrue(sender.stats.isConnected)
        XCTAssertNil(sender.stats.lastConnectFailure)
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        sender.close()
        XCTAssertEqual(sender.stats.sentFrames, 1)
        XCTAssertEqual(sender.stats.droppedFrames, 0)
    }

    func testNewestFrameWinsWhileNothingCanBeWritten() throws {
        let sender = try FrameSender(path: try socketPath(), logger: logger("sender"))
        for sequence in 0..<5 as Range<UInt64> {
            sender.offer(message(sequence: sequence, bodyBytes: 1000).2)
        }
        var stats = sender.stats
        XCTAssertEqual(stats.droppedFrames, 4)
        XCTAssertEqual(stats.bufferedBytes, message(sequence: 4, bodyBytes: 1000).2.count)
        XCTAssertFalse(sender.flush(timeout: .milliseconds(50)))
        XCTAssertLessThan(seconds { sender.close() }, 0.5)
        stats = sender.stats
        XCTAssertEqual(stats.droppedFrames, 5, "the pending frame dropped at close is not counted")
        XCTAssertEqual(stats.sentFrames, 0)
        XCTAssertEqual(stats.bufferedBytes, 0)
        XCTAssertThrowsError(try sender.send([1])) { XCTAssertEqual($0 as? FrameSocketError, .closed) }
    }

    func testSenderStartedBeforeTheServerConnectsWhenItAppears() throws {
        let path = try socketPath()
        let sender = try FrameSender(path: path, logger: logger("sender"))
        // 100 + 200 + 400 ms of tries: several connects fail, one log line says so.
        usleep(750_000)
        XCTAssertEqual(sender.stats.connects, 0)
        XCTAssertEqual(logs.count(containing: "waiting for server"), 1, "\(logs.lines)")
        sender.offer(message(sequence: 7, bodyBytes: 500).2)

        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        // The next try is at most 800 ms (then 1.6 s) away.
        let took = seconds { XCTAssertTrue(events.wait(timeout: 4) { $0.frames.count == 1 }) }
        XCTAssertLessThan(took, 2.5)
        XCTAssertEqual(events.frames.first?.0.header.sequence, 7, "the frame offered while waiting was lost")
        XCTAssertEqual(sender.stats.connects, 1)
        XCTAssertEqual(logs.count(containing: "server sender connected"), 1)
        XCTAssertEqual(logs.count(containing: "waiting for server"), 1)
        sender.close()
        server.stop()
    }

    func testReaderKilledMidFrameSenderSurvivesAndReconnects() throws {
        // With SIGPIPE at its default action, a plain write to the vanished reader would kill this
        // process; MSG_NOSIGNAL must turn it into an error.
        let previous = signal(SIGPIPE, SIG_DFL)
        defer { signal(SIGPIPE, previous) }

        let path = try socketPath()
        let listener = rawListen(path)
        let sender = try FrameSender(path: path, logger: logger("sender"))
        let reader = rawAccept(listener, timeout: 5)
        XCTAssertGreaterThanOrEqual(reader, 0)
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.isConnected })

        let big = message(sequence: 1, bodyBytes: 1 << 20).2  // far more than the socket buffer
        sender.offer(big)
        XCTAssertEqual(rawRead(reader, count: 64 * 1024), 64 * 1024)
        // The reader dies mid-frame: its listener and then its connection go away (in that order, so the
        // sender's reconnect cannot land on the dying listener's backlog, as it did under ThreadSanitizer).
        close(listener)
        unlink(path.string)
        close(reader)
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.droppedFrames == 1 && !sender.stats.isConnected })
        XCTAssertEqual(sender.stats.sentFrames, 0)
        XCTAssertTrue(waitUntil(timeout: 1) { logs.count(containing: "server disconnected") == 1 }, "\(logs.lines)")

        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        let (_, body, bytes) = message(sequence: 2, bodyBytes: 1 << 20)
        sender.offer(bytes)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })
        XCTAssertEqual(events.frames.first?.0.body, body)
        XCTAssertEqual(sender.stats.connects, 2)
        XCTAssertEqual(sender.stats.sentFrames, 1)
        sender.close()
        server.stop()
    }

    func testCloseIsPromptWhileAWriteIsBlocked() throws {
        let path = try socketPath()
        let listener = rawListen(path)
        defer {
            close(listener)
            unlink(path.string)
        }
        let sender = try FrameSender(path: path, logger: logger("sender"))
        let reader = rawAccept(listener, timeout: 5)  // accepts, never reads
        defer { close(reader) }
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.isConnected })
        sender.offer(message(sequence: 1, bodyBytes: 4 << 20).2)
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.bufferedBytes > 0 })
        usleep(100_000)
        XCTAssertEqual(sender.stats.sentFrames, 0)
        XCTAssertLessThan(seconds { sender.close() }, 0.5)
        XCTAssertEqual(sender.stats.droppedFrames, 1)
    }

    func testDroppingTheLastReferenceClosesTheSender() throws {
        var sender: FrameSender? = try FrameSender(path: try socketPath(), logger: logger("sender"))
        XCTAssertTrue(waitUntil(timeout: 1) { frameThreadsRunning() })
        sender?.offer([1, 2, 3])
        XCTAssertLessThan(seconds { sender = nil }, 0.5)
        // The thread returns right after it signalled the end of its work.
        XCTAssertTrue(waitUntil(timeout: 1) { !frameThreadsRunning() })
    }
}
