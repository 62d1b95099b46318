import Dispatch
import Foundation
import Glibc
import ScreencastSupport
import Synchronization
import XCTest

@testable import Signaling

/// The HTTP server in a process that already holds more than FD_SETSIZE (1024) descriptors: its listening
/// socket, its inter-thread channel and every connection get numbers above 1024. With select() libmicrohttpd
/// refused to start ("Listen socket descriptor (1045) is not less than FD_SETSIZE") and closed such
/// connections at accept — seen on a CI rehearsal whose test process held ~1040 descriptors. It polls now.
final class ManyDescriptorsTests: XCTestCase {
    static let extraDescriptors = 1100

    func testAServerAboveFDSetSizeStartsAndServesConcurrentRequests() throws {
        var limit = rlimit()
        XCTAssertEqual(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit), 0)
        let needed = rlim_t(Self.extraDescriptors + 200)
        if limit.rlim_cur < needed {
            // Raise the soft limit as far as the hard one allows; a hard limit below the need is a failure
            // of the machine's setup, said so, not a skip.
            XCTAssertGreaterThanOrEqual(limit.rlim_max, needed, "RLIMIT_NOFILE hard limit \(limit.rlim_max) is too low for this test")
            limit.rlim_cur = min(needed, limit.rlim_max)
            XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit), 0)
        }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<Self.extraDescriptors {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            XCTAssertGreaterThanOrEqual(fd, 0)
            held.append(fd)
        }
        XCTAssertGreaterThan(held.max() ?? 0, 1024)

        let configuration = SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0))
        let server = try SignalingServer(
            configuration: configuration, sessions: FakeSessions(), stats: { .null },
            logger: Logger(component: "test", threshold: .error))
        defer { server.stop() }
        let statuses = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        // From 5 loopback addresses, 4 each: within the per-address connection limit (8).
        for index in 0..<20 {
            group.enter()
            Thread.detachNewThread { [port = server.port] in
                do {
                    let status = try RawHTTPClient.request(
                        port: port, method: "GET", path: "/healthz", timeout: 10, source: "127.0.0.\(10 + index % 5)").status
                    statuses.withLock { $0.append(status) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 15), .success)
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(statuses.withLock { $0 }, Array(repeating: 200, count: 20))
    }
}
