import Foundation
import FrameWire
import Glibc
import XCTest

@testable import FrameSocket

/// The socket file (or its folder) removed while the server runs, as a cleaner of /tmp would: the server
/// listens there again within its check interval, the sender connected meanwhile keeps going, and a file
/// that is not ours at the path is left alone.
final class SocketFileGoneTests: SocketTestCase {
    private func makeServer(_ path: SocketPath, _ events: EventRecorder) -> FrameServer {
        FrameServer(path: path, limits: .standard, logger: logger("server"), rawBytes: nil, readObserver: nil, onEvent: events.handler)
    }

    func testRemovedFolderIsMadeAgainAndTheCurrentSenderKeepsGoing() throws {
        let path = try SocketPath(folder + "/run/agent.sock")
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        let first = rawConnect(path)
        XCTAssertGreaterThanOrEqual(first, 0)
        defer { if first >= 0 { close(first) } }
        rawWrite(first, message(sequence: 0, bodyBytes: 1000).2)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 1 })

        try FileManager.default.removeItem(atPath: folder + "/run")
        XCTAssertLessThan(rawConnect(path), 0, "nothing to connect to while the file is gone")
        let back = waitUntil(timeout: 2 * Double(ServerLoop.pathCheckMicros) / 1e6 + 1) { fileMode(path.string)?.type == S_IFSOCK }
        XCTAssertTrue(back, "the socket file was not made again:\n\(logs.lines.joined(separator: "\n"))")
        XCTAssertEqual(fileMode(folder + "/run")?.permissions, 0o700, "the folder is made 0700 again")
        XCTAssertEqual(fileMode(path.string)?.permissions, 0o600, "and the socket 0600")
        // The line follows the new socket's bind: wait for it rather than race it.
        XCTAssertTrue(waitUntil(timeout: 2) { self.logs.count(containing: "socket file gone; listening again") == 1 }, logs.lines.joined(separator: "\n"))

        // The sender from before is still the one being read…
        rawWrite(first, message(sequence: 1, bodyBytes: 1000).2)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 2 })
        XCTAssertEqual(events.frames.map { $0.1.connection }, [1, 1])
        // …and after it leaves, a new one connects through the new file.
        close(first)
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 1 })
        let second = rawConnect(path)
        XCTAssertGreaterThanOrEqual(second, 0, "the new socket file does not accept connections")
        rawWrite(second, message(sequence: 2, bodyBytes: 1000).2)
        XCTAssertTrue(events.wait(timeout: 5) { $0.frames.count == 3 })
        XCTAssertEqual(events.frames.last?.1.connection, 2)
        close(second)
        XCTAssertTrue(events.wait(timeout: 5) { $0.ended.count == 2 })
        server.stop()
        XCTAssertNil(fileMode(path.string), "stop removes the new file")
    }

    func testAFileThatIsNotASocketInItsPlaceIsLeftAloneAndSaidOnce() throws {
        let path = try socketPath()
        let events = EventRecorder()
        let server = makeServer(path, events)
        try server.start()
        XCTAssertEqual(unlink(path.string), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: path.string, contents: Data("mine".utf8)))
        XCTAssertTrue(waitUntil(timeout: 4) { self.logs.count(containing: "cannot listen there again") == 1 }, logs.lines.joined(separator: "\n"))
        usleep(2_200_000)  // two more checks: nothing is said or touched again
        XCTAssertEqual(logs.count(containing: "cannot listen there again"), 1)
        XCTAssertEqual(try String(contentsOfFile: path.string, encoding: .utf8), "mine")
        server.stop()
        XCTAssertEqual(try String(contentsOfFile: path.string, encoding: .utf8), "mine", "stop leaves someone else's file")
    }
}
