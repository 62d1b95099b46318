import ScreencastSupport
import Sharing
import Synchronization
import XCTest

/// The droppable cadence follows the outliers: on with a GCC viewer far below the rest, one reference frame in
/// `clamp(ceil(highest / outlier), 2, 6)`, off again (after a hold) when none is left.
final class DroppableCadencePolicyTests: XCTestCase {
    func testThePeriodIsTheRatioRoundedUpWithin2To6() {
        let cases: [(highest: Int, outlier: Int, period: Int)] = [
            (2000, 999, 3), (2000, 900, 3), (2000, 667, 3), (2000, 666, 4), (2000, 500, 4), (2000, 450, 5),
            (2000, 400, 5), (2000, 399, 6), (2000, 150, 6), (2000, 1, 6), (1000, 600, 2), (0, 0, 2),
        ]
        for (highest, outlier, period) in cases {
            XCTAssertEqual(DroppableCadencePolicy.period(highestKbps: highest, outlierKbps: outlier), period, "\(highest) / \(outlier)")
        }
    }

    func testOnWithAnOutlierOffAfterTheHold() {
        var policy = DroppableCadencePolicy(offHoldMicros: 5_000_000)
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 0), Int??.none, "no outlier: stays off")
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: 500, nowMicros: 1_000_000), .some(4))
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: 520, nowMicros: 1_100_000), Int??.none, "still 4")
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: 300, nowMicros: 1_200_000), .some(6))
        XCTAssertEqual(policy.period, 6)
        // The outlier rises above half the highest: the cadence holds 5 s, in case it falls back.
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 2_000_000), Int??.none)
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 6_999_999), Int??.none)
        XCTAssertEqual(policy.period, 6)
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 7_000_000), .some(nil))
        XCTAssertNil(policy.period)
        // An outlier back within the hold restarts it.
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: 900, nowMicros: 8_000_000), .some(3))
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 9_000_000), Int??.none)
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: 900, nowMicros: 13_000_000), Int??.none)
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 14_000_000), Int??.none)
        XCTAssertEqual(policy.update(highestKbps: 2000, lowestOutlierKbps: nil, nowMicros: 18_999_999), Int??.none, "5 s from 14 s")
        // No estimate left at all (every viewer gone): off at once.
        XCTAssertEqual(policy.update(highestKbps: nil, lowestOutlierKbps: nil, nowMicros: 18_999_999), .some(nil))
    }

    /// The follower says who the outliers are: GCC targets below half the highest counted estimate (a REMB
    /// viewer is never one, a silent one does not count).
    func testTheFollowerFeedsThePolicy() {
        var follower = BitrateFollower(minimumKbps: 100)
        var policy = DroppableCadencePolicy(offHoldMicros: 0)
        _ = follower.update(peer: "fast", bitsPerSecond: 2_000_000, ceilingKbps: 3000, source: .congestionControl, nowMicros: 0)
        XCTAssertEqual(policy.update(follower, nowMicros: 0), Int??.none)
        _ = follower.update(peer: "remb", bitsPerSecond: 300_000, ceilingKbps: 3000, source: .remb, nowMicros: 0)
        XCTAssertEqual(policy.update(follower, nowMicros: 0), Int??.none, "a REMB viewer is never thinned: it lowers the encoder instead")
        _ = follower.remove(peer: "remb", ceilingKbps: 3000)
        _ = follower.update(peer: "slow", bitsPerSecond: 450_000, ceilingKbps: 3000, source: .congestionControl, nowMicros: 0)
        XCTAssertEqual(follower.highestEstimateKbps, 2000)
        XCTAssertEqual(follower.lowestOutlierKbps, 450)
        XCTAssertEqual(policy.update(follower, nowMicros: 0), .some(5))
        _ = follower.update(peer: "slower", bitsPerSecond: 200_000, ceilingKbps: 3000, source: .congestionControl, nowMicros: 0)
        XCTAssertEqual(follower.outliers, ["slow", "slower"])
        XCTAssertEqual(policy.update(follower, nowMicros: 0), .some(6), "sized for the slowest")
        _ = follower.remove(peer: "slower", ceilingKbps: 3000)
        XCTAssertEqual(policy.update(follower, nowMicros: 1), .some(5))
        // The fast viewer falls silent: the slow one is the highest that counts, no outlier is left.
        _ = follower.heard(peer: "slow", nowMicros: 2_500_000, ceilingKbps: 3000)
        _ = follower.checkSilence(nowMicros: 3_000_000, ceilingKbps: 3000)
        XCTAssertEqual(follower.silentPeers, ["fast"])
        XCTAssertNil(follower.lowestOutlierKbps)
        XCTAssertEqual(policy.update(follower, nowMicros: 3_000_000), .some(nil))
    }
}

/// ``ViewerHub`` turns the follower's outliers into the encoder's cadence (here with the SFU leg's
/// estimates, which need no peer), and shows it in `/stats`.
final class ViewerHubCadenceTests: XCTestCase {
    final class Encoder: SharedEncoderControl {
        let calls = Mutex<[String]>([])
        func requestKeyframe() {}
        func setBitrate(kbps: Int?) { calls.withLock { $0.append("bitrate \(kbps.map(String.init) ?? "default")") } }
        func setDroppableCadence(period: Int?) { calls.withLock { $0.append("cadence \(period.map(String.init) ?? "off")") } }
        var cadence: [String] { calls.withLock { $0.filter { $0.hasPrefix("cadence") } } }
    }

    func bitrateJSON(_ hub: ViewerHub) -> [(String, JSONValue)] {
        guard case .object(let fields) = hub.json, case .object(let bitrate)? = fields.first(where: { $0.0 == "bitrate" })?.1 else {
            XCTFail("no bitrate object")
            return []
        }
        return bitrate
    }

    func testTheCadenceTurnsOnWithAnOutlierAndOffWhenItLeaves() throws {
        let encoder = Encoder()
        let hub = try ViewerHub(
            configuration: SharingConfiguration(
                ice: .init(role: .controlled, localAddresses: ["127.0.0.1"]), configuredBitrateKbps: 3000, droppableOffHoldMicros: 0),
            encoder: encoder, logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        hub.consumerEstimate("fast", bitsPerSecond: 2_000_000, source: .congestionControl)
        XCTAssertEqual(encoder.cadence, [])
        hub.consumerEstimate("slow", bitsPerSecond: 500_000, source: .congestionControl)
        XCTAssertEqual(encoder.cadence, ["cadence 4"])
        XCTAssertEqual(encoder.calls.withLock { $0 }.filter { $0.hasPrefix("bitrate") }, ["bitrate 2000"], "the fast viewer's rate holds")
        var bitrate = bitrateJSON(hub)
        XCTAssertEqual(bitrate.first { $0.0 == "outliers" }?.1, .array([.string("slow")]))
        XCTAssertEqual(bitrate.first { $0.0 == "droppablePeriod" }?.1, .number(4))
        hub.consumerEstimate("slow", bitsPerSecond: 350_000, source: .congestionControl)
        XCTAssertEqual(encoder.cadence, ["cadence 4", "cadence 6"])
        hub.consumerEstimate("slow", bitsPerSecond: 1_500_000, source: .congestionControl)
        XCTAssertEqual(encoder.cadence, ["cadence 4", "cadence 6", "cadence off"], "no outlier (hold 0): off")
        bitrate = bitrateJSON(hub)
        XCTAssertEqual(bitrate.first { $0.0 == "droppablePeriod" }?.1, .null)
        XCTAssertEqual(bitrate.first { $0.0 == "cadenceChanges" }?.1, .number(3))
        hub.consumerEstimate("slow", bitsPerSecond: 300_000, source: .congestionControl)
        hub.consumerEstimate("slow", bitsPerSecond: nil, source: .congestionControl)
        XCTAssertEqual(encoder.cadence.suffix(2), ["cadence 6", "cadence off"], "the outlier gone: off")
    }

    /// `--droppable-period`: on from the start, whatever the estimates.
    func testAFixedPeriodIsSetOnceAndKept() throws {
        let encoder = Encoder()
        let hub = try ViewerHub(
            configuration: SharingConfiguration(
                ice: .init(role: .controlled, localAddresses: ["127.0.0.1"]), configuredBitrateKbps: 3000, droppableOffHoldMicros: 0,
                fixedDroppablePeriod: 3),
            encoder: encoder, logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        XCTAssertEqual(encoder.cadence, ["cadence 3"])
        hub.consumerEstimate("fast", bitsPerSecond: 2_000_000, source: .congestionControl)
        hub.consumerEstimate("slow", bitsPerSecond: 300_000, source: .congestionControl)
        hub.consumerEstimate("slow", bitsPerSecond: nil, source: .congestionControl)
        XCTAssertEqual(encoder.cadence, ["cadence 3"])
        XCTAssertEqual(bitrateJSON(hub).first { $0.0 == "droppablePeriod" }?.1, .number(3))
    }
}
