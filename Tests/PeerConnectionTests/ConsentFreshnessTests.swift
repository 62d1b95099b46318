import PeerConnection
import XCTest

/// ``ConsentFreshness`` alone: when consent lapses and expires, what renews it, and that a stall of our own
/// process is not counted as the peer's silence.
final class ConsentFreshnessTests: XCTestCase {
    /// Looked at every 100 ms with no renewal: fresh until exactly 30 s, lapsed once, expired at 30 s + grace.
    func testSilenceLapsesAtTheLimitAndExpiresAfterTheGrace() {
        var consent = ConsentFreshness(graceMicros: 5_000_000, nowMicros: 1_000)
        var changes: [(UInt64, ConsentFreshness.Change)] = []
        for step in 1...400 {
            let now = 1_000 + UInt64(step) * 100_000
            let change = consent.advance(nowMicros: now)
            if change != .none { changes.append((now - 1_000, change)) }
        }
        XCTAssertEqual(changes.map(\.0), [30_000_000, 35_000_000])
        XCTAssertEqual(changes.map(\.1), [.lapsed, .expired])
        XCTAssertEqual(consent.phase, .expired)
        XCTAssertEqual(consent.lapses, 1)
        XCTAssertNil(consent.deadlineMicros)
        XCTAssertEqual(consent.renewed(nowMicros: 41_000_000), .none, "an expired consent stays expired")
        XCTAssertEqual(consent.phase, .expired)
    }

    /// A renewal resets the silence; one while lapsed brings consent back (`.renewed`), once.
    func testRenewalResetsAndBringsALapsedConsentBack() {
        var consent = ConsentFreshness(limitMicros: 3_000_000, graceMicros: 2_000_000, nowMicros: 0)
        for second in 1...2 { XCTAssertEqual(consent.advance(nowMicros: UInt64(second) * 1_000_000), .none) }
        XCTAssertEqual(consent.renewed(nowMicros: 2_500_000), .none)
        XCTAssertEqual(consent.silentMicros, 0)
        XCTAssertEqual(consent.advance(nowMicros: 3_500_000), .none)
        XCTAssertEqual(consent.advance(nowMicros: 4_500_000), .none, "2 s of silence since the renewal")
        XCTAssertEqual(consent.advance(nowMicros: 5_500_000), .lapsed)
        XCTAssertEqual(consent.phase, .lapsed)
        XCTAssertEqual(consent.advance(nowMicros: 6_000_000), .none)
        XCTAssertEqual(consent.renewed(nowMicros: 6_200_000), .renewed)
        XCTAssertEqual(consent.renewed(nowMicros: 6_300_000), .none)
        XCTAssertEqual(consent.phase, .fresh)
        XCTAssertEqual(consent.lapses, 1)
    }

    /// Our process did not run for 60 s (SIGSTOP): the one look after it counts 1 s, not 60.
    func testAStallOfOurOwnProcessCountsOneStep() {
        var consent = ConsentFreshness(graceMicros: 5_000_000, nowMicros: 0)
        XCTAssertEqual(consent.advance(nowMicros: 10_000_000), .none)
        XCTAssertEqual(consent.silentMicros, ConsentFreshness.maximumStepMicros)
        XCTAssertEqual(consent.advance(nowMicros: 70_000_000), .none)
        XCTAssertEqual(consent.silentMicros, 2 * ConsentFreshness.maximumStepMicros)
        XCTAssertEqual(consent.phase, .fresh)
        XCTAssertEqual(consent.advance(nowMicros: 70_000_000), .none, "no time passed")
        XCTAssertEqual(consent.advance(nowMicros: 60_000_000), .none, "the clock never runs backwards here")
        XCTAssertEqual(consent.silentMicros, 2 * ConsentFreshness.maximumStepMicros)
    }

    /// The deadline is at most one step away, and exactly at a limit when that falls sooner.
    func testDeadlineFallsWithinAStepAndOnTheLimits() {
        var consent = ConsentFreshness(limitMicros: 2_500_000, graceMicros: 300_000, nowMicros: 100)
        XCTAssertEqual(consent.deadlineMicros, 1_000_100)
        _ = consent.advance(nowMicros: 1_000_100)
        _ = consent.advance(nowMicros: 2_000_100)
        XCTAssertEqual(consent.deadlineMicros, 2_500_100, "the limit, half a step away")
        XCTAssertEqual(consent.advance(nowMicros: 2_500_100), .lapsed)
        XCTAssertEqual(consent.deadlineMicros, 2_800_100, "the grace's end")
        XCTAssertEqual(consent.advance(nowMicros: 2_800_100), .expired)
    }

    /// An ICE restart gives the new path's checks the whole limit; it does not revive an expired consent.
    func testRestartStartsTheCountAgain() {
        var consent = ConsentFreshness(limitMicros: 2_000_000, graceMicros: 1_000_000, nowMicros: 0)
        _ = consent.advance(nowMicros: 1_000_000)
        XCTAssertEqual(consent.advance(nowMicros: 2_000_000), .lapsed)
        consent.restarted(nowMicros: 2_100_000)
        XCTAssertEqual(consent.phase, .fresh)
        XCTAssertEqual(consent.silentMicros, 0)
        XCTAssertEqual(consent.advance(nowMicros: 3_100_000), .none)
        XCTAssertEqual(consent.advance(nowMicros: 4_100_000), .lapsed)
        XCTAssertEqual(consent.lapses, 2)
        XCTAssertEqual(consent.advance(nowMicros: 5_100_000), .expired)
        consent.restarted(nowMicros: 5_200_000)
        XCTAssertEqual(consent.phase, .expired)
    }

    /// A zero limit is taken as 1 µs (it cannot lapse before it starts).
    func testAZeroLimitIsOneMicrosecond() {
        var consent = ConsentFreshness(limitMicros: 0, graceMicros: 0, nowMicros: 5)
        XCTAssertEqual(consent.limitMicros, 1)
        XCTAssertEqual(consent.deadlineMicros, 6)
        XCTAssertEqual(consent.advance(nowMicros: 6), .lapsed)
        XCTAssertEqual(consent.advance(nowMicros: 7), .expired)
    }
}
