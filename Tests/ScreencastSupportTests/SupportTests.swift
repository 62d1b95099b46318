import Dispatch
import Foundation
import Glibc
import ScreencastSupport
import Synchronization
import XCTest

/// JSON output, terminal-safe text, the clock, threads and stop signals, and the small system wrappers.
final class SupportTests: XCTestCase {
    func testJSONIsCompactKeepsKeyOrderAndEscapesPerRFC8259() {
        let value: JSONValue = .object([
            ("z", 1), ("a", .array([true, false, nil])), ("s", "q\"\\\n\r\t\u{1}é"),
            ("big", .number(UInt64.max)), ("neg", .number(-5)), ("d", .double(0.5)), ("nan", .double(.nan)),
            ("empty", .object([])), ("list", .array([])),
        ])
        XCTAssertEqual(value.serialized,
                       #"{"z":1,"a":[true,false,null],"s":"q\"\\\n\r\t\u0001é","big":18446744073709551615,"neg":-5,"d":0.5,"nan":null,"empty":{},"list":[]}"#)
        let parsed = try? JSONSerialization.jsonObject(with: Data(value.serialized.utf8)) as? [String: Any]
        XCTAssertEqual(parsed?["s"] as? String, "q\"\\\n\r\t\u{1}é", "Foundation's parser reads back the same text")
        XCTAssertEqual(JSONValue.number(Int64.min), .int(Int64.min))
        XCTAssertEqual(JSONValue.number(UInt8(7)), .int(7))
        XCTAssertEqual(JSONValue.object([("a", 1)]) == .object([("a", 1)]), true)
        XCTAssertNotEqual(JSONValue.object([("a", 1), ("b", 2)]), .object([("b", 2), ("a", 1)]), "order is part of the value")
    }

    func testTextForATerminalHasEveryControlWrittenOut() {
        XCTAssertEqual("plain text ✓".escapingNonPrintable, "plain text ✓")
        XCTAssertEqual("a\r\nb\tc".escapingNonPrintable, "a\\r\\nb\\tc")
        XCTAssertEqual("\u{1B}[31mred\u{7}".escapingNonPrintable, "\\u{1b}[31mred\\u{7}")
        XCTAssertEqual("\u{7F}\u{85}\u{9B}".escapingNonPrintable, "\\u{7f}\\u{85}\\u{9b}")
        XCTAssertEqual("back\\slash".escapingNonPrintable, "back\\slash")
    }

    func testTheMonotonicClockMovesForwardInMicroseconds() {
        let a = MonotonicClock.nowMicros()
        usleep(20_000)
        let b = MonotonicClock.nowMicros()
        XCTAssertGreaterThanOrEqual(b - a, 20_000)
        XCTAssertLessThan(b - a, 2_000_000)
        XCTAssertEqual(Duration.milliseconds(1500).wholeMicroseconds, 1_500_000)
        XCTAssertEqual(Duration.nanoseconds(1999).wholeMicroseconds, 1)
        XCTAssertEqual(Duration.seconds(-1).wholeMicroseconds, 0)
    }

    func testABackgroundThreadRunsNamedAndSignalsWhenDone() throws {
        let seen = Mutex<String?>(nil)
        let done = BackgroundThread.start(name: "a-long-thread-name-cut") {
            let fd = open("/proc/thread-self/comm", O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(fd, &buffer, 64)
            close(fd)
            seen.withLock { $0 = String(decoding: buffer[0..<max(0, n)], as: UTF8.self).trimmingCharacters(in: .newlines) }
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(seen.withLock { $0 }, "a-long-thread-n", "the kernel keeps 15 bytes of the name")
    }

    func testAStopSignalWakesASleeperAtOnceAndStaysSet() {
        let stop = StopSignal()
        XCTAssertFalse(stop.isStopped)
        let start = MonotonicClock.nowMicros()
        XCTAssertFalse(stop.sleep(micros: 10_000), "a sleep that runs out says not stopped")
        XCTAssertGreaterThanOrEqual(MonotonicClock.nowMicros() - start, 10_000)
        let woke = Mutex<UInt64?>(nil)
        let done = BackgroundThread.start(name: "sleeper") {
            let s = MonotonicClock.nowMicros()
            XCTAssertTrue(stop.sleep(micros: 30_000_000))
            woke.withLock { $0 = MonotonicClock.nowMicros() - s }
        }
        usleep(50_000)
        stop.stop()
        stop.stop()  // idempotent
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertLessThan(woke.withLock { $0 } ?? .max, 2_000_000, "woken by stop, not by its 30 s")
        XCTAssertTrue(stop.sleep(micros: 30_000_000), "every later sleep returns at once")
        XCTAssertTrue(stop.isStopped)
    }

    func testTheOpenFileLimitIsRaisedToTheHardOne() throws {
        var limit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        let result = try XCTUnwrap(OpenFileLimit.raiseToHard())
        XCTAssertEqual(result.after, UInt64(limit.rlim_max))
        XCTAssertEqual(OpenFileLimit.current, UInt64(limit.rlim_max))
        XCTAssertEqual(OpenFileLimit.raiseToHard()?.before, UInt64(limit.rlim_max), "a second call changes nothing")
    }

    func testSystemErrorTextIsStrerror() {
        XCTAssertEqual(SystemErrorText.of(ENOENT), "No such file or directory")
        XCTAssertEqual(SystemErrorText.of(EACCES), "Permission denied")
        XCTAssertFalse(SystemErrorText.of(99_999).isEmpty)
        errno = EPIPE
        XCTAssertEqual(SystemErrorText.of(), "Broken pipe", "errno by default")
    }

    func testMallocTuningCallsReachGlibc() {
        XCTAssertTrue(GlibcMalloc.setMmapThreshold(bytes: 1 << 20))
        GlibcMalloc.trim()
        XCTAssertFalse(ScreencastVersion.string.isEmpty)
        XCTAssertNotNil(ScreencastVersion.string.range(of: #"^\d+\.\d+\.\d+"#, options: .regularExpression), "a semantic version")
    }
}
