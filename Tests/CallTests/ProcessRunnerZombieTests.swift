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
}
