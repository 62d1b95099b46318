import CongestionControl
import RTP
import XCTest

/// The send-side controller as the RTP session drives it.
final class ControllerTests: XCTestCase {
    private func controller(start: Int = 300_000) throws -> SendSideCongestionController {
        try SendSideCongestionController(configuration: .init(minBitsPerSecond: 100_000, startBitsPerSecond: start,
                                                              maxBitsPerSecond: 3_000_000))
    }

    func testConfigurationIsChecked() {
        func refused(_ configuration: SendSideCongestionController.Configuration, _ field: String) {
            do {
                _ = try SendSideCongestionController(configuration: configuration)
                XCTFail("accepted \(configuration)")
            } catch {
                guard case .invalidConfiguration(let name, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(name, field)
            }
        }
        refused(.init(minBitsPerSecond: 0), "minBitsPerSecond")
        refused(.init(minBitsPerSecond: 500_000, startBitsPerSecond: 300_000), "startBitsPerSecond")
        refused(.init(startBitsPerSecond: 4_000_000, maxBitsPerSecond: 3_000_000), "startBitsPerSecond")
        refused(.init(feedbackTimeoutMicros: 0), "feedbackTimeoutMicros")
    }

    func testStartCeilingAndStats() throws {
        var gcc = try controller()
        let start = gcc.start(atMicros: 0)
        XCTAssertEqual(start.targetBitsPerSecond, 300_000)
        XCTAssertEqual(start.probes.map(\.bitsPerSecond), [900_000, 1_800_000])
        XCTAssertEqual(gcc.stats.probeClustersRequested, 2)

        let capped = gcc.setCeiling(bitsPerSecond: 200_000, atMicros: 10)
        XCTAssertEqual(capped.targetBitsPerSecond, 200_000)
        XCTAssertTrue(capped.targetChanged)
        XCTAssertEqual(gcc.stats.ceilingBitsPerSecond, 200_000)
        XCTAssertEqual(gcc.setCeiling(bitsPerSecond: 50_000, atMicros: 20).targetBitsPerSecond, 100_000, "never below min")
        // Lifting the ceiling does not jump back: the loss-based side grows from where it was.
        XCTAssertEqual(gcc.setCeiling(bitsPerSecond: nil, atMicros: 30).targetBitsPerSecond, 100_000)

        let stats = gcc.stats
        XCTAssertEqual(stats.usage, .normal)
        XCTAssertEqual(stats.rateControlState, .hold)
        XCTAssertEqual(stats.delayThresholdMillis, 12.5)
        XCTAssertNil(stats.acknowledgedBitsPerSecond)
        XCTAssertNil(stats.roundTripMillis)
        gcc.onRoundTripTime(micros: 42_000)
        XCTAssertEqual(gcc.stats.roundTripMillis, 42)
    }

    func testFeedbackTimeoutLowersTheTarget() throws {
        var gcc = try controller(start: 1_000_000)
        _ = gcc.start(atMicros: 0)
        for index in 0..<400 {
            gcc.onPacketSent(sequenceNumber: UInt16(index), sizeBytes: 1200, atMicros: Int64(index) * 10_000)
        }
        XCTAssertEqual(gcc.stats.bytesInFlight, 480_000)
        XCTAssertFalse(gcc.onTick(atMicros: 2_900_000).targetChanged, "3 s without feedback have not passed")
        XCTAssertEqual(gcc.onTick(atMicros: 3_100_000).targetBitsPerSecond, 800_000, "×0.8")
        XCTAssertEqual(gcc.onTick(atMicros: 3_500_000).targetBitsPerSecond, 800_000, "once per second")
        XCTAssertEqual(gcc.onTick(atMicros: 4_100_000).targetBitsPerSecond, 640_000)
    }

    /// An outage drives the target to the floor by the feedback timeout; the new path (an ICE restart)
    /// starts again at the start rate with the start probes, nothing in flight, no RTT, and the timeout
    /// counting from the first packet sent on it.
    func testARouteChangeStartsAgainAtTheStartRate() throws {
        var gcc = try controller()
        var earlierIDs = gcc.start(atMicros: 0).probes.map(\.id)
        gcc.onRoundTripTime(micros: 30_000)
        for index in 0..<400 {
            gcc.onPacketSent(sequenceNumber: UInt16(index), sizeBytes: 1200, atMicros: Int64(index) * 10_000)
        }
        let lowered = (3...8).map {
            let update = gcc.onTick(atMicros: Int64($0) * 1_000_000 + 100_000)
            earlierIDs += update.probes.map(\.id)
            return update.targetBitsPerSecond
        }
        XCTAssertEqual(lowered, [240_000, 192_000, 153_600, 122_880, 100_000, 100_000], "×0.8 a second down to the floor")

        let changed = gcc.onRouteChange(atMicros: 8_200_000)
        XCTAssertEqual(changed.targetBitsPerSecond, 300_000)
        XCTAssertTrue(changed.targetChanged)
        XCTAssertEqual(changed.probes.map(\.bitsPerSecond), [900_000, 1_800_000])
        XCTAssertEqual(changed.probes.map(\.id), [earlierIDs.max()! + 1, earlierIDs.max()! + 2], "cluster ids go on counting")
        XCTAssertEqual(gcc.stats.bytesInFlight, 0)
        XCTAssertNil(gcc.stats.roundTripMillis)
        XCTAssertEqual(gcc.stats.lossBasedBitsPerSecond, 300_000)
        XCTAssertEqual(gcc.stats.delayBasedBitsPerSecond, 300_000)
        XCTAssertFalse(gcc.onTick(atMicros: 8_300_000).targetChanged, "the outage is not counted again")

        for index in 0..<100 {
            gcc.onPacketSent(sequenceNumber: UInt16(400 + index), sizeBytes: 1200, atMicros: 8_300_000 + Int64(index) * 10_000)
        }
        XCTAssertEqual(gcc.stats.bytesInFlight, 120_000)
        XCTAssertFalse(gcc.onTick(atMicros: 11_200_000).targetChanged, "3 s since the first packet on the new path have not passed")
        XCTAssertEqual(gcc.onTick(atMicros: 11_400_000).targetBitsPerSecond, 240_000)
    }

    func testARouteChangeKeepsTheCeiling() throws {
        var gcc = try controller()
        _ = gcc.start(atMicros: 0)
        _ = gcc.setCeiling(bitsPerSecond: 250_000, atMicros: 10)
        let changed = gcc.onRouteChange(atMicros: 20)
        XCTAssertEqual(changed.targetBitsPerSecond, 250_000)
        XCTAssertFalse(changed.targetChanged)
        XCTAssertEqual(gcc.stats.ceilingBitsPerSecond, 250_000)
    }

    func testFeedbackAboutUnknownPacketsIsCountedNotFatal() throws {
        var gcc = try controller()
        _ = gcc.start(atMicros: 0)
        let feedback = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 500, referenceTime: 0,
                                                 feedbackPacketCount: 0, statuses: [.received(delta: 1), .notReceived])
        let update = gcc.onTransportFeedback(feedback, atMicros: 100_000)
        XCTAssertEqual(update.targetBitsPerSecond, 300_000)
        XCTAssertFalse(update.targetChanged)
        XCTAssertEqual(gcc.stats.unknownPackets, 2)
        XCTAssertEqual(gcc.stats.feedbackPackets, 1)
    }

    /// Packets at 1 Mbit/s through a path whose queue grows by 20 % of the send spacing: the delay-based side
    /// must see over-use and bring the target below the acknowledged rate.
    func testGrowingDelayInFeedbackLowersTheTarget() throws {
        var gcc = try controller(start: 1_000_000)
        _ = gcc.start(atMicros: 0)
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
        var sequence: UInt16 = 0
        var sawOveruse = false
        for step in 0..<300 {  // 3 s, a 1250-byte packet every 10 ms
            let now = Int64(step) * 10_000
            gcc.onPacketSent(sequenceNumber: sequence, sizeBytes: 1250, atMicros: now)
            generator.record(sequenceNumber: sequence, arrivalMicros: 20_000 + Int64(step) * 12_000)
            sequence &+= 1
            for feedback in generator.feedback(nowMicros: 20_000 + Int64(step) * 12_000) {
                _ = gcc.onTransportFeedback(feedback, atMicros: now + 30_000)
                if gcc.stats.usage == .overusing { sawOveruse = true }
            }
        }
        XCTAssertTrue(sawOveruse)
        let stats = gcc.stats
        let acknowledged = try XCTUnwrap(stats.acknowledgedBitsPerSecond)
        XCTAssertEqual(Double(acknowledged), 1250 * 8 / 0.012, accuracy: 60_000, "arrivals 12 ms apart: 833 kbit/s")
        XCTAssertLessThan(stats.targetBitsPerSecond, acknowledged)
        XCTAssertGreaterThan(stats.delayTrend, 0.1)
    }
}
