import Glibc
import XCTest

@testable import FrameSocket

/// Socket path validation and the default path (no sockets involved).
final class SocketPathTests: XCTestCase {
    private func error(_ path: String) -> FrameSocketError? {
        do {
            _ = try SocketPath(path)
            return nil
        } catch {
            return error
        }
    }

    func testEmptyAndRelativePathsAreRejected() {
        XCTAssertEqual(error(""), .emptyPath)
        XCTAssertEqual(error("agent.sock"), .relativePath("agent.sock"))
        XCTAssertEqual(error("./run/agent.sock"), .relativePath("./run/agent.sock"))
        XCTAssertEqual(error("~/agent.sock"), .relativePath("~/agent.sock"))
    }

    func testNULInsidePathIsRejected() {
        // A leading NUL would name an abstract socket; one inside would silently shorten the path.
        XCTAssertEqual(error("\0abstract"), .pathContainsNUL("\0abstract"))
        XCTAssertEqual(error("/tmp/a\0b"), .pathContainsNUL("/tmp/a\0b"))
    }

    func testLengthLimitIs107Bytes() throws {
        let path107 = "/" + String(repeating: "a", count: 106)
        let path108 = "/" + String(repeating: "a", count: 107)
        let path120 = "/" + String(repeating: "a", count: 119)
        XCTAssertEqual(try SocketPath(path107).string, path107)
        XCTAssertEqual(error(path108), .pathTooLong(path: path108, bytes: 108, limit: 107))
        XCTAssertEqual(error(path120), .pathTooLong(path: path120, bytes: 120, limit: 107))
        XCTAssertEqual(SocketPath.maxBytes, 107)
        XCTAssertEqual(MemoryLayout.size(ofValue: sockaddr_un().sun_path), SocketPath.maxBytes + 1)
    }

    func testLengthCountsUTF8Bytes() throws {
        // "é" is two bytes: 5 + 51 × 2 = 107 fits, one more does not (53 characters, 109 bytes).
        let fits = "/tmp/" + String(repeating: "é", count: 51)
        let tooLong = fits + "é"
        XCTAssertNoThrow(try SocketPath(fits))
        XCTAssertEqual(error(tooLong), .pathTooLong(path: tooLong, bytes: 109, limit: 107))
    }

    func testErrorsReadClearly() {
        XCTAssertEqual(FrameSocketError.emptyPath.description, "socket path is empty")
        XCTAssertTrue(FrameSocketError.pathTooLong(path: "/x", bytes: 108, limit: 107).description.contains("108 bytes"))
        let system = FrameSocketError.systemCall(name: "bind", errno: EACCES, path: "/run/x.sock")
        XCTAssertEqual(system.description, "bind '/run/x.sock' failed: Permission denied (errno \(EACCES))")
    }

    func testDefaultPathPrefersXDGRuntimeDir() throws {
        XCTAssertEqual(
            try SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000).string,
            "/run/user/1000/screencast/agent.sock")
        XCTAssertEqual(
            try SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"], uid: 1000).string,
            "/run/user/1000/screencast/agent.sock")
    }

    func testDefaultPathFallsBackToTmpPerUser() throws {
        XCTAssertEqual(try SocketPath.defaultPath(environment: [:], uid: 1000).string, "/tmp/screencast-1000/agent.sock")
        // Empty or relative XDG_RUNTIME_DIR is invalid per the XDG spec and ignored.
        XCTAssertEqual(try SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": ""], uid: 7).string, "/tmp/screencast-7/agent.sock")
        XCTAssertEqual(try SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": "run"], uid: 7).string, "/tmp/screencast-7/agent.sock")
        XCTAssertEqual(try SocketPath.defaultPath(environment: [:]).string, "/tmp/screencast-\(getuid())/agent.sock")
    }

    func testDirectory() throws {
        XCTAssertEqual(try SocketPath("/tmp/screencast-0/agent.sock").directory, "/tmp/screencast-0")
        XCTAssertEqual(try SocketPath("/agent.sock").directory, "/")
    }

    func testPeerPolicyAllowsOwnUserAndRootOnly() {
        XCTAssertTrue(ServerContext.allows(peerUID: 1000, serverUID: 1000))
        XCTAssertTrue(ServerContext.allows(peerUID: 0, serverUID: 1000))
        XCTAssertFalse(ServerContext.allows(peerUID: 1001, serverUID: 1000))
        XCTAssertTrue(ServerContext.allows(peerUID: 0, serverUID: 0))
        XCTAssertFalse(ServerContext.allows(peerUID: 65534, serverUID: 0))
    }

    func testBackoffDoublesFrom100msTo2s() {
        let backoff = FrameSender.Backoff.standard
        let delays = (1...8).map { backoff.delay(afterFailures: $0) }
        XCTAssertEqual(delays, [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
            .milliseconds(1600), .seconds(2), .seconds(2), .seconds(2),
        ])
        XCTAssertEqual(backoff.delay(afterFailures: 10_000), .seconds(2))
    }
}
