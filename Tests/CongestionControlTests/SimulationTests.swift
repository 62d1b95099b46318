import CongestionControl
import CongestionSimulation
import XCTest

/// GCC against the in-memory bottleneck (issue 12's scenarios): a sender that wants 3 Mbit/s, a FIFO
/// drop-tail link, 25 ms each way, TWCC feedback every 100 ms. Figures are per simulated second.
final class SimulationTests: XCTestCase {
    private func run(_ scenario: CongestionSimulation.Scenario) throws -> [CongestionSimulation.Second] {
        var simulation = try CongestionSimulation(scenario: scenario)
        let seconds = try simulation.run()
        XCTAssertEqual(seconds.count, Int(scenario.durationMicros / 1_000_000))
        return seconds
    }

    private func describe(_ seconds: ArraySlice<CongestionSimulation.Second>) -> String {
        seconds.map { "\($0.second): \($0.targetBitsPerSecond / 1000) kbit/s" }.joined(separator: ", ")
    }

    func testSettlesBelowAOneMegabitBottleneckWithinFiveSeconds() throws {
        let seconds = try run(.bottleneck(startBitsPerSecond: 300_000, seconds: 20))
        let settled = seconds[5...]
        for second in settled {
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 1_000_000, describe(settled))
            XCTAssertGreaterThan(second.targetBitsPerSecond, 500_000, describe(settled))
            // GCC keeps the bottleneck's queue short (it holds 100 ms) and loses nothing once settled.
            XCTAssertLessThan(second.queueDelayMillis, 60, "second \(second.second)")
            XCTAssertEqual(second.linkLossFraction, 0, "second \(second.second)")
        }
        // The encoder holds its rate: what arrives is the target, give or take 10 %, and uses the link.
        let delivered = settled.reduce(0) { $0 + $1.deliveredBitsPerSecond } / settled.count
        let target = settled.reduce(0) { $0 + $1.targetBitsPerSecond } / settled.count
        XCTAssertEqual(Double(delivered), Double(target), accuracy: 0.1 * Double(target))
        XCTAssertGreaterThan(delivered, 750_000, "mean delivered")
    }

    /// Starting at the sender's full 3 Mbit/s, the 12.5 KB queue fills in 50 ms — before the trendline has
    /// its window of 20 groups — and then stays full: a flat delay the delay-based side cannot see. The
    /// loss-based side brings the target down to the capacity within 3 s and GCC v1 then holds it there while
    /// the loss stays in its 2…10 % band (libwebrtc's `SendSideBandwidthEstimation` does the same) until a
    /// dip drains the queue and delay-based control takes over.
    func testFromTheSendersFullRateLossBringsItDownThenDelayTakesOver() throws {
        let seconds = try run(.bottleneck(startBitsPerSecond: 3_000_000, seconds: 20))
        for second in seconds[3...] {
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 1_100_000, describe(seconds[3...]))
            XCTAssertGreaterThan(second.targetBitsPerSecond, 500_000, describe(seconds[3...]))
            XCTAssertLessThan(second.linkLossFraction, 0.10, "second \(second.second)")
        }
        for second in seconds[13...] {
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 1_000_000, describe(seconds[13...]))
            XCTAssertLessThan(second.queueDelayMillis, 60, "second \(second.second)")
            XCTAssertEqual(second.linkLossFraction, 0, "second \(second.second)")
        }
    }

    func testFollowsStepsDownAndUpWithinTenSeconds() throws {
        let seconds = try run(.steps(downAt: 20, upAt: 40, seconds: 60))
        // Down to 300 kbit/s at 20 s: at or below it within 10 s, then never more than 10 % above it.
        let down = try XCTUnwrap(seconds[20..<40].first { $0.targetBitsPerSecond <= 300_000 }, describe(seconds[20..<40]))
        XCTAssertLessThan(down.second, 30, describe(seconds[20..<40]))
        for second in seconds[(down.second)..<40] {
            XCTAssertLessThanOrEqual(second.targetBitsPerSecond, 330_000, describe(seconds[20..<40]))
        }
        XCTAssertGreaterThan(seconds[30..<40].map(\.targetBitsPerSecond).min() ?? 0, 150_000, "not collapsed")
        // Up to 3 Mbit/s at 40 s: above 70 % of it within 10 s, and most of it for the last 10 s.
        let up = try XCTUnwrap(seconds[40...].first { $0.targetBitsPerSecond >= 2_100_000 }, describe(seconds[40...]))
        XCTAssertLessThan(up.second, 50, describe(seconds[40...]))
        let last = seconds[50...]
        XCTAssertGreaterThan(last.reduce(0) { $0 + $1.targetBitsPerSecond } / last.count, 2_400_000, describe(last))
        XCTAssertGreaterThan(last.reduce(0) { $0 + $1.deliveredBitsPerSecond } / last.count, 2_400_000)
    }

    func testTwoPercentRandomLossDoesNotCollapseTheRate() throws {
        let seconds = try run(.randomLoss(0.02, capacityBitsPerSecond: 5_000_000, seconds: 30))
        let settled = seconds[5...]
        // The link is not the limit (5 Mbit/s for a 3 Mbit/s sender): the target must stay above 70 % of what
        // the sender asks for.
        for second in settled {
            XCTAssertGreaterThan(second.targetBitsPerSecond, 2_100_000, describe(settled))
        }
        let loss = settled.reduce(0) { $0 + $1.linkLossFraction } / Double(settled.count)
        XCTAssertEqual(loss, 0.02, accuracy: 0.008, "the link did lose about 2 %")
    }

    func testTenPercentLossBacksOff() throws {
        // Beyond the loss-based controller's 10 %: it must lower the rate (×(1 − p/2) per interval).
        let seconds = try run(.randomLoss(0.15, capacityBitsPerSecond: 5_000_000, seconds: 20))
        XCTAssertLessThan(seconds[10...].map(\.targetBitsPerSecond).max() ?? .max, 1_000_000, describe(seconds[10...]))
    }

    func testRunsAreDeterministic() throws {
        let first = try run(.steps(downAt: 5, upAt: 10, seconds: 15))
        let second = try run(.steps(downAt: 5, upAt: 10, seconds: 15))
        XCTAssertEqual(first, second)
    }
}
