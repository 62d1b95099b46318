import CongestionControl
import RTP
import XCTest

/// ``SendSideCongestionController`` as a whole, replaying feedback traces built in memory with an injected
/// clock: packets sent on a fixed schedule (open loop: the trace does not follow the target, so every
/// decision is checked against fixed evidence), arrivals computed for a FIFO link of a given rate (each
/// packet leaves the link its serialization time after the one before, or after its own arrival at the
/// link), a receiver's ``TransportFeedbackGenerator`` (feedback every 100 ms) and 20 ms back. No probing,
/// so only the delay- and loss-based rules act (GCC draft-ietf-rmcat-gcc-02 §5–6; libwebrtc's
/// `GoogCcNetworkController`).
final class ControllerTraceTests: XCTestCase {
    /// One packet of the trace: when it is sent, its size, and whether the link drops it.
    struct Packet {
        var sendMicros: Int64
        var size: Int
        var lost = false
    }

    /// What the controller said after one feedback.
    struct Step {
        var atMicros: Int64
        var update: CongestionUpdate
        var stats: CongestionControlStats
    }

    static let oneWayMicros: Int64 = 40_000
    static let backMicros: Int64 = 20_000

    /// A controller without probes (the start scales at 1, no periodic probes).
    private func controller(start: Int = 800_000) throws -> SendSideCongestionController {
        var probing = ProbeController.Configuration()
        (probing.firstScale, probing.secondScale) = (1, 1)
        probing.periodicIntervalMicros = 0
        probing.dropTimeoutMicros = 0
        var gcc = try SendSideCongestionController(configuration: .init(minBitsPerSecond: 100_000, startBitsPerSecond: start,
                                                                        maxBitsPerSecond: 3_000_000, probing: probing))
        XCTAssertEqual(gcc.start(atMicros: 0).probes, [])
        gcc.onRoundTripTime(micros: Self.oneWayMicros + Self.backMicros)
        return gcc
    }

    /// `count` packets of `size` bytes sent `spacing` µs apart after `after`.
    static func schedule(count: Int, size: Int = 1250, spacing: Int64, after: Int64 = -1, lost: (Int) -> Bool = { _ in false }) -> [Packet] {
        (0..<count).map { Packet(sendMicros: after + 1 + Int64($0) * spacing, size: size, lost: lost($0)) }
    }

    /// Arrival times through a FIFO link of `rate` bits/s and a fixed one-way delay.
    static func arrivals(_ packets: [Packet], rate: Double) -> [Int64?] {
        var free: Int64 = .min
        return packets.map { packet in
            let serialization = Int64((Double(packet.size) * 8 * 1_000_000 / rate).rounded())
            let leaves = max(packet.sendMicros, free) + serialization
            free = leaves
            return packet.lost ? nil : leaves + oneWayMicros
        }
    }

    /// Replays the trace: sends, arrivals, feedback every 100 ms (checked at each arrival and every 10 ms),
    /// delivered `backMicros` later (twice, when `duplicate`), a tick every 25 ms. Transport-wide numbers start
    /// at `firstSequence`.
    private func replay(_ gcc: inout SendSideCongestionController, _ packets: [Packet], rate: Double, firstSequence: UInt16 = 0,
                        duplicate: Bool = false) -> [Step] {
        let arrive = Self.arrivals(packets, rate: rate)
        enum Event { case send(Int), arrive(Int), receiverCheck, deliver(RTCPTransportFeedback), tick }
        var events: [(at: Int64, order: Int, event: Event)] = []
        for (index, packet) in packets.enumerated() {
            events.append((packet.sendMicros, 0, .send(index)))
            if let arrival = arrive[index] { events.append((arrival, 1, .arrive(index))) }
        }
        let end = (arrive.compactMap { $0 }.max() ?? 0) + 300_000
        for t in stride(from: Int64(0), through: end, by: 10_000) { events.append((t, 2, .receiverCheck)) }
        for t in stride(from: Int64(0), through: end, by: 25_000) { events.append((t, 4, .tick)) }
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 9, mediaSSRC: 8))
        var steps: [Step] = []
        var pending = events.sorted { ($0.at, $0.order) < ($1.at, $1.order) }[...]
        var queued: [(at: Int64, event: Event)] = []
        while let next = pending.first {
            // Feedback in flight that lands before the next scheduled event goes first.
            if let landing = queued.first, landing.at <= next.at {
                queued.removeFirst()
                if case .deliver(let feedback) = landing.event {
                    let update = gcc.onTransportFeedback(feedback, atMicros: landing.at)
                    steps.append(Step(atMicros: landing.at, update: update, stats: gcc.stats))
                }
                continue
            }
            pending = pending.dropFirst()
            switch next.event {
            case .send(let index):
                gcc.onPacketSent(sequenceNumber: firstSequence &+ UInt16(truncatingIfNeeded: index), sizeBytes: packets[index].size,
                                 atMicros: next.at)
            case .arrive(let index):
                generator.record(sequenceNumber: firstSequence &+ UInt16(truncatingIfNeeded: index), arrivalMicros: next.at)
                fallthrough
            case .receiverCheck:
                for feedback in generator.feedback(nowMicros: next.at) {
                    queued.append((next.at + Self.backMicros, .deliver(feedback)))
                    if duplicate { queued.append((next.at + Self.backMicros + 1000, .deliver(feedback))) }
                }
            case .deliver: break
            case .tick: _ = gcc.onTick(atMicros: next.at)
            }
        }
        return steps
    }

    /// Sending exactly the link's 1 Mbit/s: no queue, so the detector stays normal and the acknowledged rate
    /// is exactly 1 Mbit/s (1250 B every 10 ms fills every window exactly). The delay-based side then climbs
    /// ×1.08 per second — from 801 kbit/s, the +1 kbit/s of the first step — until 1.5 × acknowledged +
    /// 10 kbit/s = 1.51 Mbit/s caps it, ln(1.51 / 0.801) / ln 1.08 = 8.24 s after the first feedback; the
    /// target follows it (the loss-based side, ×1.05 per 200 ms without loss, never limits it for long).
    func testAnOpenLoopAtTheLinkRateClimbsToTheThroughputLimit() throws {
        var gcc = try controller()
        let packets = Self.schedule(count: 1200, spacing: 10_000)
        let steps = replay(&gcc, packets, rate: 1_000_000)
        XCTAssertEqual(steps.count, 120, "one feedback per 100 ms over 12 s")
        XCTAssertTrue(steps.allSatisfy { $0.stats.usage == .normal && $0.stats.lossFraction == 0 })
        XCTAssertEqual(steps.compactMap(\.stats.acknowledgedBitsPerSecond).last, 1_000_000)
        XCTAssertTrue(steps.compactMap(\.stats.acknowledgedBitsPerSecond).allSatisfy { $0 == 1_000_000 })
        let first = try XCTUnwrap(steps.first)
        XCTAssertEqual(first.stats.delayBasedBitsPerSecond, 801_000)
        for step in steps {
            let seconds = Double(step.atMicros - first.atMicros) / 1_000_000
            let expected = min(801_000 * pow(1.08, seconds), 1_510_000)
            XCTAssertEqual(Double(step.stats.delayBasedBitsPerSecond), expected, accuracy: 1.5, "at \(step.atMicros) µs")
            XCTAssertLessThanOrEqual(step.stats.targetBitsPerSecond, step.stats.delayBasedBitsPerSecond)
        }
        let capped = try XCTUnwrap(steps.first { $0.stats.delayBasedBitsPerSecond == 1_510_000 })
        XCTAssertEqual(Double(capped.atMicros - first.atMicros) / 1_000_000, log(1.51 / 0.801) / log(1.08), accuracy: 0.1)
        XCTAssertEqual(steps.last?.stats.targetBitsPerSecond, 1_510_000)
    }

    /// 2 s at the link's 1 Mbit/s, then 1.25 Mbit/s into it: the queue grows 2 ms per packet (sent 8 ms
    /// apart, leaving the link 10 ms apart). The delay-based side must see over-use within 200 ms of the first
    /// queued arrival and, with an RTT of 60 ms, cut the target in that same feedback to 0.85 × the acknowledged
    /// rate — exactly 850 kbit/s, the link delivering exactly 1 Mbit/s — and hold it there while the queue
    /// keeps growing (0.85 × the same rate is no lower).
    func testAGrowingQueueCutsTheTargetInTheFeedbackThatShowsIt() throws {
        var gcc = try controller()
        let steady = Self.schedule(count: 200, spacing: 10_000)
        let overload = Self.schedule(count: 150, spacing: 8000, after: steady.last!.sendMicros + 10_000 - 1)
        let steps = replay(&gcc, steady + overload, rate: 1_000_000)
        let arrivals = Self.arrivals(steady + overload, rate: 1_000_000)
        let firstQueued = try XCTUnwrap(arrivals[201])  // the second overload packet is the first to wait
        XCTAssertEqual(firstQueued - arrivals[200]!, 10_000)
        XCTAssertTrue(steps.filter { $0.atMicros < firstQueued }.allSatisfy { $0.stats.usage == .normal })
        // The trendline's closed form against the floor threshold of 6 ms (DelayBasedEstimatorTests, with send
        // deltas of 8 ms): the modified trend passes 6 at the 9th delta of 2 ms and over-use (4 + 8 > 10 ms over
        // two deltas) is declared at the 10th — group 210's, computed when packet 211 arrives, 100 ms after the
        // first queued one. The receiver reports it in its next feedback (every 100 ms from 150 ms: 2.25 s),
        // here 20 ms later.
        XCTAssertEqual(arrivals[211], firstQueued + 100_000)
        let overuse = try XCTUnwrap(steps.first { $0.stats.usage == .overusing })
        XCTAssertEqual(overuse.atMicros, 2_270_000)
        XCTAssertEqual(try XCTUnwrap(steps.last { $0.atMicros < overuse.atMicros }).stats.usage, .normal)
        XCTAssertTrue(overuse.update.targetChanged)
        XCTAssertEqual(overuse.update.targetBitsPerSecond, 850_000, "0.85 × the acknowledged 1 Mbit/s")
        XCTAssertEqual(overuse.stats.acknowledgedBitsPerSecond, 1_000_000)
        XCTAssertEqual(overuse.stats.linkCapacityBitsPerSecond, 1_000_000)
        for step in steps where step.atMicros > overuse.atMicros {
            XCTAssertEqual(step.stats.targetBitsPerSecond, 850_000, "at \(step.atMicros) µs")
        }
    }

    /// The same evidence with transport-wide numbers starting at 65 000 (wrapping after 536 packets), and
    /// with every feedback delivered twice: the same decisions, step for step.
    func testTheWrapAndDuplicateFeedbackChangeNoDecision() throws {
        let packets = Self.schedule(count: 200, spacing: 10_000) + Self.schedule(count: 150, spacing: 8000, after: 1_999_999)
        var plain = try controller()
        let reference = replay(&plain, packets, rate: 1_000_000)
        var wrapped = try controller()
        let wrappedSteps = replay(&wrapped, packets, rate: 1_000_000, firstSequence: 65_000)
        XCTAssertEqual(wrappedSteps.map(\.update), reference.map(\.update))
        XCTAssertEqual(wrappedSteps.map(\.stats.targetBitsPerSecond), reference.map(\.stats.targetBitsPerSecond))
        XCTAssertEqual(wrapped.stats.unknownPackets, 0)

        var doubled = try controller()
        let doubledSteps = replay(&doubled, packets, rate: 1_000_000, duplicate: true)
        XCTAssertEqual(doubledSteps.count, 2 * reference.count)
        let firsts = stride(from: 0, to: doubledSteps.count, by: 2).map { doubledSteps[$0] }
        let seconds = stride(from: 1, to: doubledSteps.count, by: 2).map { doubledSteps[$0] }
        XCTAssertEqual(firsts.map(\.update), reference.map(\.update))
        XCTAssertTrue(seconds.allSatisfy { !$0.update.targetChanged }, "a repeated feedback is no news")
        XCTAssertEqual(seconds.map(\.stats.targetBitsPerSecond), reference.map(\.stats.targetBitsPerSecond))
        XCTAssertEqual(doubled.stats.feedbackPackets, 2 * plain.stats.feedbackPackets)
        XCTAssertEqual(doubled.stats.feedbackPacketsMissed, 0)
    }

    /// Every 5th packet lost on an uncongested path: the delay-based side keeps climbing, the loss-based side
    /// lowers ×(1 − 0.5 p) per measurement once 300 ms + RTT (60 ms) have passed since the last — measurements
    /// come every 200 ms (20 packets), so every 400 ms — and the target is the loss-based estimate, down to
    /// the 100 k floor. The receiver's first feedback covers packets 0…10 (11, 2 lost), so the first
    /// measurement is 4 of 21; every later one 4 of 20: 800 k × (1 − 2/21) × 0.9ⁿ⁻¹.
    func testTwentyPercentLossLowersTheTargetEveryFourHundredMilliseconds() throws {
        var gcc = try controller()
        let packets = Self.schedule(count: 1000, spacing: 10_000) { $0 % 5 == 4 }
        let steps = replay(&gcc, packets, rate: 5_000_000)
        let decreases = zip(steps.dropFirst(), steps).filter { $0.stats.lossBasedBitsPerSecond < $1.stats.lossBasedBitsPerSecond }
        // 800 k × 0.9048 × 0.9¹⁹ = 98.2 k: the 20th decrease reaches the floor.
        XCTAssertEqual(decreases.count, 20)
        for (index, pair) in decreases.enumerated() {
            let expected = 800_000 * (1 - 0.5 * 4 / 21) * pow(0.9, Double(index))
            XCTAssertEqual(Double(pair.0.stats.lossBasedBitsPerSecond), max(expected, 100_000), accuracy: 1, "decrease \(index + 1)")
            XCTAssertEqual(pair.0.stats.lossFraction, index == 0 ? 4.0 / 21 : 0.2, accuracy: 1e-12)
            XCTAssertEqual(pair.0.stats.targetBitsPerSecond, pair.0.stats.lossBasedBitsPerSecond)
            if index > 0 { XCTAssertEqual(pair.0.atMicros - decreases[index - 1].0.atMicros, 400_000, "decrease \(index + 1)") }
        }
        XCTAssertTrue(steps.allSatisfy { $0.stats.usage == .normal })
        XCTAssertGreaterThan(steps.last!.stats.delayBasedBitsPerSecond, 800_000, "delay saw no queue")
        XCTAssertEqual(steps.last?.stats.targetBitsPerSecond, 100_000)
    }
}
