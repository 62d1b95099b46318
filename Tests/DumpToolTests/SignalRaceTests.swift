import Foundation
import TestSupport
import XCTest

/// A SIGINT at any moment of start-up ends the process promptly: never lost (the break-it trial saw a
/// signal during the first ~300 ms ignored in 2 of 40 runs before signals were blocked at the top of main).
final class SignalRaceTests: XCTestCase {
    func testInterruptAtAnyMomentOfStartUpIsNeverLost() throws {
        let dir = try TemporaryDirectory(prefix: "sc-sigrace")
        defer { dir.remove() }
        var generator = SeededGenerator(seed: 2026)
        for run in 0..<25 {
            let socket = dir.path("s\(run).sock")
            let record = try ProcessRunner.start(
                TestPaths.executable("screencast-dump"), ["record", "--socket", socket, "--out", dir.path("r\(run).frames")])
            usleep(UInt32.random(in: 20_000...300_000, using: &generator))
            kill(record.processIdentifier, SIGINT)
            XCTAssertFalse(ProcessRunner.wait(for: record, timeout: 5), "run \(run): SIGINT was lost")
            // Exit 0 once main runs; a signal that beats main itself may still end the process the default way.
            let (signaled, status) = (ProcessRunner.endedBySignal(record), ProcessRunner.status(of: record))
            let clean = !signaled && status == 0
            let beforeMain = signaled && status == SIGINT
            XCTAssertTrue(clean || beforeMain, "run \(run): \(signaled ? "signal" : "exit") \(status)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "run \(run): socket left behind")
        }
    }
}
