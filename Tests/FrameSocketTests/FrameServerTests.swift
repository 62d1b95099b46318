import Foundation
import FrameWire
import Glibc
import Synchronization
import TestSupport
import XCTest

@testable import FrameSocket

/// The server's file handling, lifecycle and connection policy.
final class FrameServerTests: SocketTestCase {
    private func makeServer(
        _ path: SocketPath, _ events: EventRecorder = EventRecorder(),
        readObserver: (@Sendable (Int) -> Void)? = nil,
        rawBytes: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil
    ) -> FrameServer {
        FrameServer(
            path: path, limits: .standard, logger: logger("server"), rawBytes: rawBytes,
            readObserver: readObserver, onEvent: events.handler)
    }

    private func startError(_ server: FrameServer) -> FrameSocketError? {
        do {
            try server.start()
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Files

    func testCreatesFolder0700AndSocket0600AndStopRemovesTheFile() throws {
        let path = try SocketPath(folder + "/run/agent.sock")
        let server = makeServer(path)
        try server.start()
        XCTAssertEqual(fileMode(folder + "/run")?.permissions, 0o700)
        XCTAssertEqual(fileMode(path.string)?.permissions, 0o600)
        XCTAssertEqual(fileMode(path.string)?.type, S_IFSOCK)
        server.stop()
        XCTAssertNil(fileMode(path.string), "stop leaves the socket file behind")
        XCTAssertEqual(fileMode(folder + "/run")?.permissions, 0o700)
    }

    func testExistingFolderIsNotChmodded() throws {
        XCTAssertEqual(chmod(folder, 0o755), 0)
        let server = makeServer(try socketPath())
        try server.start()
        XCTAssertEqual(fileMode(folder)?.permissions, 0o755)
        server.stop()
    }

    /// A folder of another user (say a /tmp/screencast-$UID someone made first) is refused: they could
    /// swap the socket. Root-owned folders such as /tmp are fine.
    func testAnotherUsersFolderIsRefused() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to chown a folder to another user (uid 65534)") }
        XCTAssertEqual(mkdir(folder + "/theirs", 0o777), 0)
        XCTAssertEqual(chown(folder + "/theirs", 65534, 65534), 0)
        let server = makeServer(try SocketPath(folder + "/theirs/agent.sock"))
        XCTAssertEqual(startError(server), .foreignDirectory(path: folder + "/theirs", owner: 65534))
        XCTAssertNil(fileMode(folder + "/theirs/agent.sock"), "nothing created in the foreign folder")
    }

    func testMissingGrandparentIsAClearError() throws {
        let server = makeServer(try SocketPath(folder + "/a/b/agent.sock"))
        XCTAssertEqual(startError(server), .parentMissing(path: folder + "/a/b", missing: folder + "/a"))
        XCTAssertEqual(
            startError(makeServer(try SocketPath(folder + "/x/y/z/agent.sock"))),
            .parentMissing(path: folder + "/x/y/z", missing: folder + "/x"), "the highest missing folder is named")
    }

    func testStaleSocketFileIsReplaced() throws {
        let path = try socketPath()
        close(rawListen(path))  // the file stays, nobody listens: a crashed server's leftover
        XCTAssertEqual(fileMode(path.string)?.type, S_IFSOCK)
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        XCTAssertEqual(logs.count(containing: "stale socket replaced"), 1)
        let client = rawConnect(path)
        XCTAssertGreaterThanOrEqual(client, 0, "the new socket does not accept connections")
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        close(client)
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        XCTAssertEqual(events.ended.first?.1, .stream(.eof))
        server.stop()
        XCTAssertNil(fileMode(path.string))
    }

    func testLiveListenerOnThePathIsInUse() throws {
        let path = try socketPath()
        let listener = rawListen(path)
        defer { close(listener) }
        let server = makeServer(path)
        XCTAssertEqual(startError(server), .inUse(path: path.string))
        XCTAssertFalse(server.isRunning)
        XCTAssertEqual(fileMode(path.string)?.type, S_IFSOCK, "the live listener's file was removed")
        // Our probe connection is pending on the raw listener; take it so nothing dangles.
        let probe = rawAccept(listener, timeout: 1)
        if probe >= 0 { close(probe) }
        unlink(path.string)
    }

    func testLiveFrameServerOnThePathIsInUseAndKeepsServing() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let first = makeServer(path, events)
        try first.start()
        let second = makeServer(path)
        XCTAssertEqual(startError(second), .inUse(path: path.string))
        XCTAssertTrue(first.isRunning)
        XCTAssertNotNil(fileMode(path.string), "the second server removed the first one's socket")

        // The second server's probe looked like a sender that hung up at once.
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 && $0.ended.count == 1 })
        XCTAssertEqual(events.ended.first?.1, .stream(.eof))

        let sender = try FrameSender(path: path, logger: logger("sender"))
        let (_, body, bytes) = message(sequence: 1, bodyBytes: 1000)
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 2 })
        sender.offer(bytes)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })
        XCTAssertEqual(events.frames.first?.0.body, body)
        sender.close()
        second.stop()
        first.stop()
        XCTAssertNil(fileMode(path.string))
    }

    func testNonSocketFileIsLeftAlone() throws {
        let path = try socketPath()
        XCTAssertTrue(FileManager.default.createFile(atPath: path.string, contents: Data("keep".utf8)))
        let server = makeServer(path)
        XCTAssertEqual(startError(server), .notASocket(path: path.string))
        XCTAssertEqual(FileManager.default.contents(atPath: path.string), Data("keep".utf8))
    }

    func testPathOf107BytesServes() throws {
        let prefix = folder + "/"
        let name = String(repeating: "s", count: SocketPath.maxBytes - prefix.utf8.count)
        let path = try SocketPath(prefix + name)
        XCTAssertEqual(path.string.utf8.count, 107)
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        XCTAssertNotNil(fileMode(path.string), "the socket file is not at the full 107-byte path")
        let client = rawConnect(path)
        XCTAssertGreaterThanOrEqual(client, 0)
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        close(client)
        server.stop()
        XCTAssertNil(fileMode(path.string))
    }

    func testPathsOf108And120BytesAndEmptyAreRejectedBeforeAnySocket() {
        for length in [108, 120] {
            let path = folder + "/" + String(repeating: "s", count: length - folder.utf8.count - 1)
            XCTAssertEqual(path.utf8.count, length)
            XCTAssertThrowsError(try SocketPath(path)) { error in
                XCTAssertEqual(error as? FrameSocketError, .pathTooLong(path: path, bytes: length, limit: 107))
            }
        }
        XCTAssertThrowsError(try SocketPath("")) { XCTAssertEqual($0 as? FrameSocketError, .emptyPath) }
        XCTAssertThrowsError(try SocketPath("x/agent.sock")) {
            XCTAssertEqual($0 as? FrameSocketError, .relativePath("x/agent.sock"))
        }
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? ["?"]
        XCTAssertEqual(leftovers, [], "a rejected path created a file")
    }

    // MARK: - Lifecycle

    func testStopWithoutClientIsPromptAndIdempotent() throws {
        let path = try socketPath()
        let server = makeServer(path)
        try server.start()
        XCTAssertTrue(server.isRunning)
        XCTAssertTrue(waitUntil(timeout: 1) { frameThreadsRunning() })
        let took = seconds { server.stop() }
        XCTAssertLessThan(took, 0.5, "stop waited for a client")
        XCTAssertFalse(server.isRunning)
        XCTAssertNil(fileMode(path.string))
        XCTAssertLessThan(seconds { server.stop() }, 0.1)
        XCTAssertTrue(waitUntil(timeout: 1) { !frameThreadsRunning() })
    }

    func testStartTwiceIsAnError() throws {
        let server = makeServer(try socketPath())
        try server.start()
        XCTAssertEqual(startError(server), .alreadyStarted)
        server.stop()
    }

    func testStopWhileASenderIsConnectedReportsServerStopped() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        let client = rawConnect(path)
        defer { close(client) }
        rawWrite(client, Array("HTTP/1.1 200 OK\r\nContent-Len".utf8))
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        XCTAssertLessThan(seconds { server.stop() }, 0.5)
        XCTAssertEqual(events.ended.map(\.1), [.serverStopped])
    }

    /// A sender reconnects as soon as its connection ends; when the server is stopping, that connect must
    /// fail. Were the listener still open, the kernel would complete the connect into its backlog and the
    /// sender would count a connection to a server that never served it (seen as one agent connect too
    /// many after 20 call restarts). The connect is tried from the `senderEnded` handler itself, the first
    /// moment a sender can know its connection ended.
    func testASenderEndedByStopCannotConnectAgain() throws {
        let path = try socketPath()
        let reconnected = Mutex<Int32?>(nil)
        let events = EventRecorder()
        let server = FrameServer(
            path: path, limits: .standard, logger: logger("server"), rawBytes: nil, readObserver: nil,
            onEvent: { event in
                if case .senderEnded = event { reconnected.withLock { $0 = rawConnect(path) } }
                events.handler(event)
            })
        try server.start()
        let client = rawConnect(path)
        defer { close(client) }
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        server.stop()
        XCTAssertEqual(events.ended.map(\.1), [.serverStopped])
        let fd = try XCTUnwrap(reconnected.withLock { $0 })
        if fd >= 0 { close(fd) }
        XCTAssertEqual(fd, -1, "a connect made while the sender was being ended reached the stopping server")
    }

    func testStartStop20TimesLeaksNoDescriptors() throws {
        let path = try socketPath()
        // Warm up (first thread, first log line, …) before counting.
        let warm = makeServer(path)
        try warm.start()
        warm.stop()
        XCTAssertTrue(waitUntil(timeout: 3) { !frameThreadsRunning() })

        let before = openDescriptors().count
        let reused = makeServer(path)
        for round in 0..<20 {
            let events = EventRecorder()
            let server = round.isMultiple(of: 2) ? reused : makeServer(path, events)
            try server.start()
            if round % 4 == 1 {
                // Now and then a client too, so the accept/read/end path is part of the cycle.
                let client = rawConnect(path)
                XCTAssertGreaterThanOrEqual(client, 0)
                XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
                close(client)
            }
            server.stop()
            XCTAssertNil(fileMode(path.string), "round \(round) left the socket file")
        }
        XCTAssertTrue(waitUntil(timeout: 3) { !frameThreadsRunning() })
        let after = openDescriptors().count
        XCTAssertEqual(after, before, "descriptors leaked: \(openDescriptors())")
    }

    // MARK: - Senders

    func testReaderReadsExactSizesNeverZeroAndTapSeesEveryByte() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let sizes = Mutex<[Int]>([])
        let tapped = Mutex<[UInt8]>([])
        let server = makeServer(
            path, events,
            readObserver: { size in sizes.withLock { $0.append(size) } },
            rawBytes: { chunk in tapped.withLock { $0.append(contentsOf: chunk) } })
        try server.start()
        let sender = try FrameSender(path: path, logger: logger("sender"))
        let bodies = [1, 17, 300_000, 4096, 2]
        var stream: [UInt8] = []
        var headers: [FrameHeader] = []
        for (index, size) in bodies.enumerated() {
            let (header, _, bytes) = message(sequence: UInt64(index), bodyBytes: size, width: 100 + index, height: 200 + index, orientation: index * 3)
            headers.append(header)
            stream += bytes
            try sender.send(bytes)
        }
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == bodies.count })
        sender.close()
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        server.stop()

        let frames = events.frames
        for (index, (frame, info)) in frames.enumerated() {
            XCTAssertEqual(frame.header, headers[index])
            XCTAssertEqual(frame.body, message(sequence: UInt64(index), bodyBytes: bodies[index]).1)
            XCTAssertEqual(info.pid, getpid())
            XCTAssertEqual(info.uid, getuid())
        }
        XCTAssertEqual(events.ended.first?.1, .stream(.eof))
        let requested = sizes.withLock { $0 }
        XCTAssertFalse(requested.isEmpty)
        XCTAssertFalse(requested.contains(0), "the reader asked for 0 bytes")
        XCTAssertLessThanOrEqual(requested.max() ?? 0, 300_000, "a read reached past a frame's body")
        XCTAssertEqual(tapped.withLock { $0 }, stream, "the raw tap did not see the stream byte for byte")
    }

    func testTruncatedAndBrokenStreamsEndTheSourceAndTheServerWaitsForTheNext() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()

        let (_, _, bytes) = message(sequence: 1, bodyBytes: 5000)
        var client = rawConnect(path)
        rawWrite(client, Array(bytes[0..<(bytes.count - 10)]))
        close(client)
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        XCTAssertEqual(events.ended.last?.1, .stream(.truncated))
        XCTAssertEqual(events.frames.count, 0, "a partial frame was delivered")

        client = rawConnect(path)
        rawWrite(client, bytes + Array("GARBAGE / nope\r\n".utf8))
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 2 })
        close(client)
        guard case .stream(.error(.badStatusLine)) = events.ended.last?.1 else {
            return XCTFail("expected badStatusLine, got \(String(describing: events.ended.last?.1))")
        }
        XCTAssertEqual(events.frames.count, 1, "the frame before the error stands")

        let sender = try FrameSender(path: path, logger: logger("sender"))
        sender.offer(bytes)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 2 })
        sender.close()
        server.stop()
        XCTAssertEqual(events.connected.map(\.connection), [1, 2, 3])
    }

    func testSecondSenderIsRefusedWhileTheFirstKeepsDelivering() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()

        let first = try FrameSender(path: path, logger: logger("first"))
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        let firstConnection = events.connected[0].connection
        try first.send(message(sequence: 0, bodyBytes: 2000).2)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })

        let second = try FrameSender(path: path, logger: logger("second"))
        XCTAssertTrue(events.wait(timeout: 5) { $0.refused.count >= 1 })
        XCTAssertEqual(events.refused.first?.1, .busy)
        second.offer(message(sequence: 999, bodyBytes: 100).2)

        for sequence in 1...10 as ClosedRange<UInt64> {
            try first.send(message(sequence: sequence, bodyBytes: 2000).2)
        }
        XCTAssertTrue(first.flush(timeout: .seconds(5)))
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 11 })
        second.close()
        first.close()
        server.stop()

        XCTAssertEqual(events.frames.map(\.0.header.sequence), (0...10).map { UInt64($0) })
        XCTAssertTrue(events.frames.allSatisfy { $0.1.connection == firstConnection })
        XCTAssertEqual(events.connected.count, 1, "the second sender was accepted")
        XCTAssertEqual(first.stats.droppedFrames, 0)
        XCTAssertGreaterThanOrEqual(logs.count(containing: "sender refused"), 1)
        XCTAssertTrue(logs.lines.contains { $0.contains("sender refused") && $0.contains("reason=busy") })
    }

    /// A refused sender learns why (the call writes a ``RefusalMessage`` before closing): it says "another agent is
    /// already sharing to this call" once and asks again every 5 s, not six times in six seconds with "Broken
    /// pipe" (issue 34). Once the first sender leaves, the second is taken and says "connected".
    func testARefusedSenderSaysWhyOnceAndBacksOff() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        let first = try FrameSender(path: path, logger: logger("first"))
        XCTAssertTrue(events.wait(timeout: 5) { $0.connected.count == 1 })
        try first.send(message(sequence: 0, bodyBytes: 100).2)

        let second = try FrameSender(path: path, logger: logger("second"))
        let started = Date()
        XCTAssertTrue(waitUntil(timeout: 5) { second.stats.refusals >= 1 })
        XCTAssertEqual(second.stats.lastRefusal, "another agent is already sharing to this call (pid \(getpid()))")
        // Keep offering pictures for 6 s, as an agent does: it must not hammer the call meanwhile.
        while Date().timeIntervalSince(started) < 6 {
            second.offer(message(sequence: 1, bodyBytes: 100).2)
            usleep(100_000)
        }
        let refusedIn6s = events.refused.count
        XCTAssertLessThanOrEqual(refusedIn6s, 2, "one try per 5 s, not one a second")
        XCTAssertEqual(logs.lines.filter { $0.contains("refused by the call") }.count, 1, logs.lines.joined(separator: "\n"))
        XCTAssertTrue(logs.lines.contains { $0.contains("refused by the call") && $0.contains("status=409")
            && $0.contains("another agent is already sharing to this call") }, logs.lines.joined(separator: "\n"))
        XCTAssertFalse(logs.lines.contains { $0.contains("second") && $0.contains("server disconnected") }, "no Broken pipe lines")

        first.close()
        XCTAssertTrue(events.wait(timeout: 10) { $0.connected.count == 2 }, "taken once the first has gone")
        let taken = waitUntil(timeout: 10) {
            second.offer(message(sequence: 2, bodyBytes: 100).2)
            return self.logs.lines.contains { $0.contains("connected") && $0.contains("after=") }
        }
        XCTAssertTrue(taken, "said once the call kept it a second")
        second.close()
        server.stop()
    }

    /// A client that connects and hangs up in a loop (or keeps getting refused) costs a burst of log lines,
    /// not two per connection; every connection still reaches the event handler, also a sender that delivers
    /// frames while its lines are held back.
    func testConnectionFloodIsRateLimitedInTheLogButNotInTheEvents() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()

        for _ in 0..<60 {
            let fd = rawConnect(path)
            XCTAssertGreaterThanOrEqual(fd, 0)
            close(fd)
        }
        XCTAssertTrue(events.wait(timeout: 10) { $0.ended.count == 60 })
        XCTAssertEqual(events.connected.count, 60)
        let connectedLines = logs.count(containing: "server sender connected")
        let endedLines = logs.count(containing: "server sender ended")
        XCTAssertEqual(connectedLines, 8, "the burst, then held back (no 5 s passed)")
        XCTAssertEqual(endedLines, 8, "only the announced empty connections say they ended")

        // After the flood a real sender delivers; its end is logged even though its start was held back.
        let sender = try FrameSender(path: path, logger: logger("sender"))
        try sender.send(message(sequence: 1, bodyBytes: 500).2)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })
        sender.close()
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 61 })
        XCTAssertEqual(events.frames.count, 1)
        server.stop()
        XCTAssertEqual(logs.count(containing: "server sender ended"), 8, "still within the 5 s after the burst")
        XCTAssertEqual(logs.count(containing: "server sender connected"), 8)
    }

    /// With a frame timeout, a client that connects and sends nothing (or stalls mid-frame) is dropped, so the
    /// next sender gets the slot; a sender that keeps completing frames (keepalives) is never dropped.
    func testFrameTimeoutDropsSilentAndStalledSendersButNotSteadyOnes() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = FrameServer(
            path: path, limits: .standard, frameTimeout: .milliseconds(400), logger: logger("server"),
            rawBytes: nil, readObserver: nil, onEvent: events.handler)
        try server.start()
        defer { server.stop() }

        let silent = rawConnect(path)
        XCTAssertGreaterThanOrEqual(silent, 0)
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        XCTAssertEqual(events.ended.first?.1, .frameTimeout(0.4))
        close(silent)

        let stalled = rawConnect(path)
        rawWrite(stalled, Array(message(sequence: 0, bodyBytes: 1000).2.prefix(500)))
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 2 })
        XCTAssertEqual(events.ended.last?.1, .frameTimeout(0.4))
        close(stalled)

        // Frames every 100 ms for 1.2 s: three times the timeout, never dropped.
        let steady = try FrameSender(path: path, logger: logger("steady"))
        for sequence in 0..<12 as Range<UInt64> {
            try steady.send(message(sequence: sequence, bodyBytes: 100).2)
            usleep(100_000)
        }
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 12 })
        XCTAssertEqual(events.ended.count, 2, "the steady sender was dropped")
        steady.close()
        XCTAssertTrue(logs.lines.contains { $0.contains("sender ended") && $0.contains("reason=frame-timeout") })
    }

    func testAnotherUsersProcessIsRefused() throws {
        guard getuid() == 0 else {
            throw XCTSkip("needs root to run a peer as another user (uid 65534); the uid rule is unit-tested in SocketPathTests")
        }
        guard python3() != nil else { return XCTFail("python3 is not installed; run tools/setup") }
        XCTAssertEqual(chmod(folder, 0o755), 0)
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        XCTAssertEqual(chmod(path.string, 0o666), 0)  // let the other user reach the socket at all
        let script = """
            import os, socket, sys
            os.setgid(65534); os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            print(data.split(b"\\r\\n")[0].decode() if data else "eof", flush=True)
            """
        let (process, output) = try startPython(script, [path.string])
        XCTAssertTrue(events.wait(timeout: 10) { $0.refused.count == 1 })
        XCTAssertTrue(finish(process, timeout: 10))
        let said = String(decoding: POSIXPipeRead.toEnd(output.fileHandleForReading.fileDescriptor), as: UTF8.self)
        server.stop()
        XCTAssertEqual(events.refused.first?.1, .foreignUser)
        XCTAssertEqual(events.refused.first?.0.uid, 65534)
        XCTAssertEqual(events.connected.count, 0)
        XCTAssertEqual(said.trimmingCharacters(in: .whitespacesAndNewlines), "HTTP/1.1 403 Forbidden", "told why, then the end (§5.1)")
    }

    func testStopFromInsideTheEventHandlerDoesNotDeadlock() throws {
        let path = try socketPath()
        let box = Mutex<FrameServer?>(nil)
        let stopped = Mutex(false)
        let server = FrameServer(path: path, logger: logger("server")) { event in
            if case .senderConnected = event {
                box.withLock { $0 }?.stop()
                stopped.withLock { $0 = true }
            }
        }
        box.withLock { $0 = server }
        try server.start()
        let client = rawConnect(path)
        defer { close(client) }
        XCTAssertTrue(waitUntil(timeout: 5) { stopped.withLock { $0 } })
        XCTAssertTrue(waitUntil(timeout: 5) { fileMode(path.string) == nil })
        box.withLock { $0 = nil }
    }
}
