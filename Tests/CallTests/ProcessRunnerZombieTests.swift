import Foundation
import Glibc
@testable import TestSupport
import XCTest

/// ``ProcessRunner/isZombie(_:)``, which lets the runner reap a child whose exit Foundation missed: a child
/// spawned outside Foundation and not waited for is a zombie; a running process and a missing one are not.
final class ProcessRunnerZombieTests: XCTestCase {
    func testAnUnwaitedChildIsAZombieAndOthersAreNot() throws {
        XCTAssertFalse(ProcessRunner.isZombie(getpid()), "this process runs")
        XCTAssertFalse(ProcessRunner.isZombie(Int32.max), "no such process")
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { arguments.forEach { free($0) } }
        XCTAssertEqual(posix_spawn(&pid, "/bin/true", nil, nil, arguments, environ), 0)
        var zombie = false
        for _ in 0..<200 where !zombie {
            usleep(10_000)
            zombie = ProcessRunner.isZombie(pid)
        }
        XCTAssertTrue(zombie, "/bin/true exited and was not waited for")
        var status: Int32 = -1
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        XCTAssertEqual(status, 0)
        XCTAssertFalse(ProcessRunner.isZombie(pid), "reaped")
    }

    /// The helpers tests use instead of Foundation's `isRunning`, `terminationStatus` and `terminationReason`
    /// (which trap for a child whose exit Foundation missed: a CI run ended with SIGILL that way, 2026-12-05).
    func testRunningStatusAndSignalWithoutFoundationsAccessors() throws {
        let sleeper = try ProcessRunner.start(URL(fileURLWithPath: "/bin/sleep"), ["30"])
        XCTAssertTrue(ProcessRunner.isRunning(sleeper))
        kill(sleeper.processIdentifier, SIGTERM)
        XCTAssertFalse(ProcessRunner.wait(for: sleeper, timeout: 10), "SIGTERM ends sleep")
        XCTAssertFalse(ProcessRunner.isRunning(sleeper))
        XCTAssertTrue(ProcessRunner.endedBySignal(sleeper))
        XCTAssertEqual(ProcessRunner.status(of: sleeper), SIGTERM)

        let failing = try ProcessRunner.start(URL(fileURLWithPath: "/bin/sh"), ["-c", "exit 3"])
        XCTAssertFalse(ProcessRunner.wait(for: failing, timeout: 10))
        XCTAssertFalse(ProcessRunner.isRunning(failing))
        XCTAssertFalse(ProcessRunner.endedBySignal(failing))
        XCTAssertEqual(ProcessRunner.status(of: failing), 3)
    }
}
