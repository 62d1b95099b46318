import CongestionControl
import RTP
import XCTest

/// ``SendSideCongestionController`` in a closed loop built in memory with an injected clock: a sender that
/// sends 1250-byte packets at exactly the current target, a FIFO link of fixed rate with an unbounded queue
/// (no loss: only the delay-based side acts), 40 ms one way, a receiver's ``TransportFeedbackGenerator``
/// (every 100 ms) and 20 ms back (RTT 60 ms, told to the controller). No probes: start at 800 kbit/s.
///
/// GCC's cycle on such a link (draft-ietf-rmcat-gcc-02 §5.5; libwebrtc's `AimdRateControl`): the rate passes
/// the capacity C, the queue grows, over-use is declared and the rate falls to 0.85 × the acknowledged rate —
/// which, with the link saturated, is C: 0.85 C; the queue drains (under-use: hold); then the increase is
/// additive near the capacity estimate (C), one packet per response time 2 × (60 + 100) ms, about 30 kbit/s
/// per second at 1 Mbit/s, until C is passed again by the little the detector needs to see the slope.
final class ClosedLoopTraceTests: XCTestCase {
    struct Sample {
        var atMicros: Int64
        var stats: CongestionControlStats
        /// The queueing delay of the last packet that arrived, µs.
        var queueMicros: Int64
    }

    /// Runs `seconds` of the loop on a link of `capacity` bits/s (changing to `later` at `changeAt` µs, if given).
    private func run(capacity: Double, seconds: Int64, later: Double? = nil, changeAt: Int64 = .max) throws -> [Sample] {
        var probing = ProbeController.Configuration()
        (probing.firstScale, probing.secondScale) = (1, 1)
        probing.periodicIntervalMicros = 0
        probing.dropTimeoutMicros = 0
        var gcc = try SendSideCongestionController(configuration: .init(minBitsPerSecond: 100_000, startBitsPerSecond: 800_000,
                                                                        maxBitsPerSecond: 3_000_000, probing: probing))
        _ = gcc.start(atMicros: 0)
        gcc.onRoundTripTime(micros: 60_000)
        var generator = TransportFeedbackGenerator(configuration: .init(senderSSRC: 1, mediaSSRC: 2))
        var samples: [Sample] = []
        var nextSend: Int64 = 0, nextCheck: Int64 = 0, nextTick: Int64 = 25_000, linkFree: Int64 = 0
        var sequence: UInt16 = 0
        var inFlight: [(arrival: Int64, sequence: UInt16, queue: Int64)] = []
        var returning: [(at: Int64, feedback: RTCPTransportFeedback)] = []
        var lastQueue: Int64 = 0
        let end = seconds * 1_000_000
        while true {
            let now = min(nextSend, nextCheck, nextTick, inFlight.first?.arrival ?? .max, returning.first?.at ?? .max)
            guard now < end else { break }
            while let first = inFlight.first, first.arrival == now {
                inFlight.removeFirst()
                generator.record(sequenceNumber: first.sequence, arrivalMicros: now)
                lastQueue = first.queue
            }
            // The receiver sends feedback when due: checked at every arrival and every 10 ms.
            for feedback in generator.feedback(nowMicros: now) { returning.append((now + 20_000, feedback)) }
            if now == nextCheck { nextCheck += 10_000 }
            while let first = returning.first, first.at == now {
                returning.removeFirst()
                _ = gcc.onTransportFeedback(first.feedback, atMicros: now)
                samples.append(Sample(atMicros: now, stats: gcc.stats, queueMicros: lastQueue))
            }
            if now == nextSend {
                let rate = now >= changeAt ? (later ?? capacity) : capacity
                gcc.onPacketSent(sequenceNumber: sequence, sizeBytes: 1250, atMicros: now)
                let serialization = Int64((1250 * 8 * 1_000_000 / rate).rounded())
                let leaves = max(now, linkFree) + serialization
                linkFree = leaves
                inFlight.append((leaves + 40_000, sequence, leaves - serialization - now))
                sequence &+= 1
                nextSend = now + Int64((1250 * 8 * 1_000_000 / Double(gcc.targetBitsPerSecond)).rounded())
            }
            if now == nextTick {
                _ = gcc.onTick(atMicros: now)
                nextTick += 25_000
            }
        }
        return samples
    }

    private func describe(_ samples: [Sample]) -> String {
        stride(from: 0, to: samples.count, by: 10).map { "\(samples[$0].atMicros / 100_000): \(samples[$0].stats.targetBitsPerSecond / 1000)" }
            .joined(separator: " ")
    }

    /// The times (µs) at which the target fell, with the target it fell to.
    private func decreases(_ samples: [Sample]) -> [(atMicros: Int64, target: Int)] {
        zip(samples.dropFirst(), samples).compactMap { next, previous in
            next.stats.targetBitsPerSecond < previous.stats.targetBitsPerSecond ? (next.atMicros, next.stats.targetBitsPerSecond) : nil
        }
    }

    /// 1 Mbit/s: 1250-byte packets are exactly 15 per 150 ms window while the link is saturated, so the
    /// acknowledged rate at each over-use is exactly 1 Mbit/s and every decrease lands on 850 kbit/s. The
    /// increase from there is additive: R / 28.8 bit/s per second while a 30 fps frame is 3 packets (R ≤
    /// 864 k), R / 38.4 with 4 — from 864 k to about 1.02 M that is 38.4 × ln(1020 / 864) = 6.4 s, plus half
    /// a second below 864 k and the queue's draining and detection: one cycle every 7–9 s. Above C the rate
    /// gets only as far as the detector needs to see the queue grow: the modified trend 240 × slope must pass
    /// γ, which stays ≤ 15.5 ms here, so the rate stays within 1 + 15.5 / 240 (6.5 %) of C.
    func testOnAOneMegabitLinkTheTargetCyclesBetweenEightyFiveAndAboutOneHundredPercent() throws {
        let samples = try run(capacity: 1_000_000, seconds: 40)
        let text = describe(samples)
        // The first over-use comes once the multiplicative increase (×1.08/s from 801 k) passed 1 Mbit/s:
        // 2.9 s after the first feedback (70 ms), seen within a second.
        let firstOveruse = try XCTUnwrap(samples.first { $0.stats.usage == .overusing }, text)
        XCTAssertGreaterThan(firstOveruse.atMicros, 70_000 + Int64(log(1_000_000 / 801_000.0) / log(1.08) * 1_000_000), text)
        XCTAssertLessThan(firstOveruse.atMicros, 4_000_000, text)
        XCTAssertEqual(firstOveruse.stats.targetBitsPerSecond, 850_000, text)

        let settled = samples.filter { $0.atMicros >= 5_000_000 }
        let targets = settled.map(\.stats.targetBitsPerSecond)
        XCTAssertEqual(targets.min(), 850_000, text)
        let gamma = try XCTUnwrap(samples.map(\.stats.delayThresholdMillis).max())
        XCTAssertLessThanOrEqual(gamma, 15.5)
        XCTAssertLessThanOrEqual(Double(targets.max() ?? .max), 1_000_000 * (1 + 15.5 / 240), text)
        let mean = Double(targets.reduce(0, +)) / Double(targets.count)
        XCTAssertGreaterThan(mean, 850_000, text)
        XCTAssertLessThan(mean, 1_000_000, text)

        let cuts = decreases(samples)
        XCTAssertTrue(cuts.allSatisfy { $0.target == 850_000 }, "\(cuts)")
        let settledCuts = cuts.filter { $0.atMicros >= 5_000_000 }
        XCTAssertTrue((4...5).contains(settledCuts.count), "\(cuts)")
        for (next, previous) in zip(cuts.dropFirst(), cuts) {
            XCTAssertGreaterThan(next.atMicros - previous.atMicros, 7_000_000, "\(cuts)")
            XCTAssertLessThan(next.atMicros - previous.atMicros, 9_000_000, "\(cuts)")
        }
        XCTAssertTrue(samples.allSatisfy { $0.stats.linkCapacityBitsPerSecond.map { $0 == 1_000_000 } ?? true })
        // The queue stays short: it builds only while the rate is above C, by at most 6.5 %.
        XCTAssertLessThan(settled.map(\.queueMicros).max() ?? .max, 50_000)
        XCTAssertTrue(samples.allSatisfy { $0.stats.lossFraction == 0 })
    }

    /// The link drops from 1 Mbit/s to 500 kbit/s at 20 s, while the sender is at 850 kbit/s: the queue grows
    /// at 41 ms per 100 ms, over-use follows within 300 ms, and — the acknowledged rate falling window by window
    /// towards 500 k — the target is cut at each new acknowledged rate until it is at or below C within 1 s.
    /// Then the cycle runs between 0.85 × acknowledged (at least 0.85 × the smaller window sample, 7 packets per
    /// 150 ms: 397 kbit/s) and a little above C; on average below C.
    func testAStepDownIsFollowedWithinOneSecond() throws {
        let samples = try run(capacity: 1_000_000, seconds: 40, later: 500_000, changeAt: 20_000_000)
        let text = describe(samples)
        let after = samples.filter { $0.atMicros >= 20_000_000 }
        let overuse = try XCTUnwrap(after.first { $0.stats.usage == .overusing }, text)
        XCTAssertLessThan(overuse.atMicros, 20_300_000, text)
        let below = try XCTUnwrap(after.first { $0.stats.targetBitsPerSecond <= 500_000 }, text)
        XCTAssertLessThan(below.atMicros, 21_000_000, text)
        let cuts = decreases(after).filter { $0.atMicros < 21_500_000 }
        XCTAssertGreaterThanOrEqual(cuts.count, 3, "\(cuts)")
        let settled = samples.filter { $0.atMicros >= 25_000_000 }.map(\.stats.targetBitsPerSecond)
        XCTAssertGreaterThanOrEqual(settled.min() ?? 0, Int(0.85 * 7 * 1250 * 8 / 0.150), text)
        let mean = Double(settled.reduce(0, +)) / Double(settled.count)
        XCTAssertGreaterThan(mean, 0.85 * 500_000, text)
        XCTAssertLessThan(mean, 500_000, text)
        // The queue the drop left (the sender at 850 k into 500 k until the cuts took hold) drains: 20 s later it
        // is as short as before the step.
        XCTAssertLessThan(samples.filter { $0.atMicros >= 30_000_000 }.map(\.queueMicros).max() ?? .max, 50_000)
    }
}
