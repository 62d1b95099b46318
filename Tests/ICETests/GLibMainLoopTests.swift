import Foundation
@testable import ICE
import Synchronization
import XCTest

/// ``GLibMainLoop``, the thread every ICE agent's libnice runs on: callbacks run there, in the order they
/// were scheduled, never on the caller's thread; timers wait at least their delay; stop joins the thread and
/// nothing runs after it; a stop from the loop's own thread detaches instead of deadlocking.
final class GLibMainLoopTests: XCTestCase {
    /// Waits (at most 3 s) until `condition` holds.
    func wait(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(3)
        while !condition() {
            guard Date() < deadline else { return false }
            usleep(1_000)
        }
        return true
    }

    func testCallbacksRunOnTheLoopThreadInOrder() throws {
        let loop = GLibMainLoop()
        let order = Mutex<[Int]>([])
        let onLoop = Mutex<[Bool]>([])
        try loop.start(name: "test-loop") {}
        XCTAssertFalse(loop.isCurrentThread)
        for index in 0..<200 {
            loop.schedule {
                order.withLock { $0.append(index) }
                onLoop.withLock { $0.append(loop.isCurrentThread) }
            }
        }
        XCTAssertTrue(wait { order.withLock { $0.count } == 200 })
        XCTAssertEqual(order.withLock { $0 }, Array(0..<200))
        XCTAssertTrue(onLoop.withLock { $0.allSatisfy { $0 } })
        let name = Mutex<String?>(nil)
        loop.schedule { name.withLock { $0 = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) } }
        XCTAssertTrue(wait { name.withLock { $0 } != nil })
        XCTAssertEqual(name.withLock { $0 }?.trimmingCharacters(in: .whitespacesAndNewlines), "test-loop")
        XCTAssertTrue(loop.stop())
    }

    /// A timer never fires early; two timers fire in the order of their delays, whatever the order they were set.
    func testTimersWaitAtLeastTheirDelay() throws {
        let loop = GLibMainLoop()
        try loop.start(name: "test-timers") {}
        defer { loop.stop() }
        let fired = Mutex<[(String, TimeInterval)]>([])
        let start = Date()
        loop.schedule(after: .milliseconds(120)) { fired.withLock { $0.append(("late", Date().timeIntervalSince(start))) } }
        loop.schedule(after: .milliseconds(40)) { fired.withLock { $0.append(("early", Date().timeIntervalSince(start))) } }
        XCTAssertTrue(wait { fired.withLock { $0.count } == 2 })
        let times = fired.withLock { $0 }
        XCTAssertEqual(times.map(\.0), ["early", "late"])
        XCTAssertGreaterThanOrEqual(times[0].1, 0.040)
        XCTAssertGreaterThanOrEqual(times[1].1, 0.120)
        XCTAssertEqual(GLibMainLoop.milliseconds(.milliseconds(1500)), 1500)
        XCTAssertEqual(GLibMainLoop.milliseconds(.microseconds(999)), 0, "rounded down")
        XCTAssertEqual(GLibMainLoop.milliseconds(.seconds(-1)), 0, "never negative")
    }

    /// Stop joins the thread after `afterStop` ran there; what is scheduled later never runs; stop is
    /// idempotent, and a loop never started stops at once.
    func testStopJoinsAndNothingRunsAfter() throws {
        let loop = GLibMainLoop()
        let afterStop = Mutex<Bool?>(nil)
        try loop.start(name: "test-stop") { afterStop.withLock { $0 = loop.isCurrentThread } }
        let ran = Atomic<Int>(0)
        loop.schedule { ran.add(1, ordering: .relaxed) }
        XCTAssertTrue(wait { ran.load(ordering: .relaxed) == 1 })
        XCTAssertTrue(loop.stop())
        XCTAssertEqual(afterStop.withLock { $0 }, true, "afterStop ran on the loop thread, before stop returned")
        loop.schedule { ran.add(1, ordering: .relaxed) }
        loop.schedule(after: .milliseconds(1)) { ran.add(1, ordering: .relaxed) }
        usleep(50_000)
        XCTAssertEqual(ran.load(ordering: .relaxed), 1)
        XCTAssertTrue(loop.stop())
        XCTAssertTrue(GLibMainLoop().stop(), "never started")
        try loop.start(name: "again") {}  // a finished loop does not start again
        XCTAssertFalse(loop.isCurrentThread)
    }

    /// A callback that stops its own loop cannot join itself: the thread is detached and ends after it.
    func testStopFromTheLoopThreadDetaches() throws {
        let loop = GLibMainLoop()
        let ended = Atomic<Bool>(false)
        try loop.start(name: "test-self") { ended.store(true, ordering: .releasing) }
        let result = Mutex<Bool?>(nil)
        loop.schedule { result.withLock { $0 = loop.stop() } }
        XCTAssertTrue(wait { result.withLock { $0 } != nil })
        XCTAssertEqual(result.withLock { $0 }, false)
        XCTAssertTrue(wait { ended.load(ordering: .acquiring) }, "the thread ran afterStop and ended")
        XCTAssertTrue(loop.stop(), "from outside, afterwards: nothing to join")
    }
}
