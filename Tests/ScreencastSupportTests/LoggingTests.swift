@testable import ScreencastSupport
import Synchronization
import XCTest

/// The log line format every process writes (`level component message key=value…`), its escaping, its
/// threshold, and the throttle that keeps one kind of line from flooding it.
final class LoggingTests: XCTestCase {
    private final class Lines: Sendable {
        let all = Mutex<[String]>([])
        var output: LogOutput { LogOutput { line in self.all.withLock { $0.append(line) } } }
        var list: [String] { all.withLock { $0 } }
    }

    func testALineIsLevelComponentMessageThenFieldsInOrder() {
        let lines = Lines()
        let logger = Logger(component: "call", threshold: .debug, output: lines.output)
        logger.info("viewer joined", ["address": "127.0.0.1:5000", "viewers": 3])
        logger.named("sfu").warning("leg lost", ["reason": "ICE failed"])
        logger.debug("tick")
        logger.error("x", [:])
        XCTAssertEqual(lines.list, [
            "info call viewer joined address=127.0.0.1:5000 viewers=3",
            "warn sfu leg lost reason=\"ICE failed\"",
            "debug call tick",
            "error call x",
        ])
    }

    func testLinesBelowTheThresholdAreNotWritten() {
        let lines = Lines()
        let logger = Logger(component: "c", threshold: .warning, output: lines.output)
        logger.debug("a")
        logger.info("b")
        logger.warning("c")
        logger.named("d").info("e")
        XCTAssertEqual(lines.list, ["warn c c"])
    }

    func testAFieldFromAPeerStaysOneLineAndCannotForgeAnother() {
        XCTAssertEqual(Logger.quoted("plain"), "plain")
        XCTAssertEqual(Logger.quoted(""), "\"\"")
        XCTAssertEqual(Logger.quoted("a b"), "\"a b\"")
        XCTAssertEqual(Logger.quoted("k=v"), "\"k=v\"")
        XCTAssertEqual(Logger.quoted("say \"hi\" \\ there"), "\"say \\\"hi\\\" \\\\ there\"")
        XCTAssertEqual(Logger.quoted("x\ninfo call forged"), "\"x\\ninfo call forged\"")
        XCTAssertEqual(Logger.quoted("\r\t\u{1B}[2J\u{7F}\u{9B}"), "\"\\r\\t\\u{1b}[2J\\u{7f}\\u{9b}\"")
        XCTAssertEqual(Logger.quoted("a\u{2028}b\u{2029}"), "\"a\\u{2028}b\\u{2029}\"")
        XCTAssertEqual(Logger.quoted("naïve→✓"), "naïve→✓", "printable Unicode is left as it is")
    }

    func testLevelsParseFromTheirOptionWords() {
        XCTAssertEqual(LogLevel(name: "debug"), .debug)
        XCTAssertEqual(LogLevel(name: "INFO"), .info)
        XCTAssertEqual(LogLevel(name: "warn"), .warning)
        XCTAssertEqual(LogLevel(name: "warning"), .warning)
        XCTAssertEqual(LogLevel(name: "error"), .error)
        XCTAssertNil(LogLevel(name: "verbose"))
        XCTAssertEqual(LogLevel.allCases.map(\.name), ["debug", "info", "warn", "error"])
        XCTAssertTrue(LogLevel.debug < .info && LogLevel.info < .warning && LogLevel.warning < .error)
    }

    func testTheThrottleLetsABurstThenOnePerIntervalAndCountsWhatItHeldBack() {
        var limiter = LogRateLimiter(burst: 3, intervalMicros: 1_000_000)
        let t0: UInt64 = 10_000_000
        XCTAssertEqual((0..<5).map { limiter.admit(now: t0 + UInt64($0)) }, [0, 0, 0, nil, nil])
        XCTAssertEqual(limiter.suppressed, 2)
        XCTAssertNil(limiter.admit(now: t0 + 500_000), "half an interval: no token yet")
        XCTAssertEqual(limiter.admit(now: t0 + 1_000_010), 3, "a token after an interval, with the 3 held back")
        XCTAssertEqual(limiter.suppressed, 0)
        XCTAssertNil(limiter.admit(now: t0 + 1_000_020))
        XCTAssertEqual((0..<3).map { limiter.admit(now: t0 + 60_000_000 + UInt64($0)) }, [1, 0, 0], "a quiet minute refills the burst, no more")
        XCTAssertNil(limiter.admit(now: t0 + 60_000_010))
    }

    func testTheThrottlesLevelSendsHeldBackLinesToDebug() {
        var limiter = LogRateLimiter(burst: 1, intervalMicros: 5_000_000)
        XCTAssertEqual(limiter.level(.warning, now: 1).level, .warning)
        let held = limiter.level(.warning, now: 2)
        XCTAssertEqual(held.level, .debug)
        XCTAssertEqual(held.suppressed, 0)
        let next = limiter.level(.warning, now: 5_000_003)
        XCTAssertEqual(next.level, .warning)
        XCTAssertEqual(next.suppressed, 1)
    }

    func testAThrottleWithNonsenseLimitsStillAdmitsOne() {
        var limiter = LogRateLimiter(burst: 0, intervalMicros: 0)
        XCTAssertEqual(limiter.burst, 1)
        XCTAssertEqual(limiter.intervalMicros, 1)
        XCTAssertEqual(limiter.admit(now: 5), 0)
        XCTAssertNil(limiter.admit(now: 5), "a clock standing still gives no token")
        XCTAssertEqual(limiter.admit(now: 4), nil, "nor one going backwards")
    }

    func testCountedFaultsAreSampledFirstThreeThenEveryHundredth() {
        XCTAssertEqual((0...400).filter { LogRateLimiter.isSampled($0) }, [1, 2, 3, 100, 200, 300, 400])
        XCTAssertEqual((1...10).filter { LogRateLimiter.isSampled($0, first: 1, every: 5) }, [1, 5, 10])
        XCTAssertFalse(LogRateLimiter.isSampled(-1))
    }
}
