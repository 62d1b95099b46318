import Foundation
import FrameWire
import Media
import TestSupport
import XCTest

/// The call process itself stopped (SIGSTOP) while a sender's frame waits in the socket: the watchdog
/// counts only time the call could run, so on SIGCONT the same sender goes on instead of being dropped
/// for the call's own absence. The frames are raw I420 of 1.4 MB, larger than the socket's buffers, so
/// the first read after SIGCONT cannot complete a frame (before the fix, the 2 s watchdog dropped the
/// sender right there).
final class StoppedCallTests: CallTestCase {
    func testTheWatchdogDoesNotCountTheTimeTheCallWasStopped() throws {
        let frames = (0..<4).map { DumpFrame(picture: makeDesktop(width: 1280, height: 720, variant: $0), timestamp: UInt64($0) * 100_000, format: .i420) }
        let dump = folder.path("big.frames")
        try Data(try makeDump(frames)).write(to: URL(fileURLWithPath: dump))
        let call = try startCall(["--watchdog", "2", "--log-level", "debug", "--stats-interval", "0"])
        let sender = try ProcessRunner.start(
            TestPaths.executable("screencast-dump"), ["replay", dump, "--socket", socket, "--loop", "--fps", "10", "--wait", "20"])
        defer { ProcessRunner.terminate(sender) }
        XCTAssertNotNil(call.waitForLine("debug frame-server frame ", occurrence: 5, timeout: 10), call.logText)

        call.signal(SIGSTOP)
        usleep(4_000_000)
        call.signal(SIGCONT)
        let before = call.log.filter { $0.hasPrefix("debug frame-server frame ") }.count
        XCTAssertNotNil(call.waitForLine("debug frame-server frame ", occurrence: before + 10, timeout: 5), "frames did not resume:\n\(call.logText.suffix(3000))")
        XCTAssertNil(call.log.first { $0.contains("reason=frame-timeout") }, "the call's own stop was held against its sender:\n\(call.logText.suffix(3000))")
        XCTAssertEqual(call.log.filter { $0.contains("sender connected") }.count, 1, "the sender had to reconnect")
        XCTAssertNotNil(call.log.first { $0.contains("the call was paused (SIGSTOP or starved) for ") && $0.contains(" ms; the sender's frame deadline is extended") }, call.logText.suffix(3000).description)
        call.signal(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.logText.suffix(2000).description)
    }
}
