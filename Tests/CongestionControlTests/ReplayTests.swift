import CongestionControl
import CongestionSimulation
import Foundation
import XCTest

/// A recorded feedback sequence (Fixtures/steps-30s.gccsim, see Fixtures/README.md) replayed into a fresh
/// controller: its decisions on fixed evidence — a 1 Mbit/s link, 300 kbit/s from 10 s, 3 Mbit/s from 20 s.
final class ReplayTests: XCTestCase {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/steps-30s.gccsim")

    private func loadFixture() throws -> SimulationRecording {
        try SimulationRecording(parsing: String(contentsOf: Self.fixture, encoding: .utf8))
    }

    /// The last decision at or before `seconds`.
    private func decision(at seconds: Double, in decisions: [SimulationRecording.Decision]) -> SimulationRecording.Decision {
        decisions.last { $0.atMicros <= Int64(seconds * 1_000_000) } ?? decisions[0]
    }

    private func decisions(from start: Double, to end: Double, in decisions: [SimulationRecording.Decision])
        -> [SimulationRecording.Decision]
    {
        decisions.filter { $0.atMicros >= Int64(start * 1_000_000) && $0.atMicros < Int64(end * 1_000_000) }
    }

    func testTheFixtureIsWhatItsReadmeSays() throws {
        let recording = try loadFixture()
        XCTAssertEqual(recording.configuration.minBitsPerSecond, 100_000)
        XCTAssertEqual(recording.configuration.startBitsPerSecond, 300_000)
        XCTAssertEqual(recording.configuration.maxBitsPerSecond, 3_000_000)
        XCTAssertTrue(recording.comments.contains("capacity 10000000 300000"))
        XCTAssertTrue(recording.comments.contains("capacity 20000000 3000000"))
        var counts = (sent: 0, feedback: 0, roundTrip: 0, tick: 0)
        for event in recording.events {
            switch event {
            case .sent: counts.sent += 1
            case .feedback: counts.feedback += 1
            case .roundTrip: counts.roundTrip += 1
            case .tick: counts.tick += 1
            }
        }
        XCTAssertEqual(counts.sent, 4246)
        XCTAssertEqual(counts.feedback, 299)
        XCTAssertEqual(counts.roundTrip, 30)
        XCTAssertEqual(counts.tick, 1201)
    }

    func testDecisionsOnTheRecordedSteps() throws {
        let recording = try loadFixture()
        let decisions = try SimulationRecording.replay(recording.events, configuration: recording.configuration)
        XCTAssertEqual(decisions[0].probes.map(\.bitsPerSecond), [900_000, 1_800_000], "initial probes at 3× and 6×")
        let end = try XCTUnwrap(decisions.last).stats
        XCTAssertEqual(end.unknownPackets, 0, "every reported packet is in the recording")
        XCTAssertEqual(end.feedbackPacketsMissed, 0)
        XCTAssertEqual(end.feedbackPackets, 299)

        // 1 Mbit/s: settled below the capacity and above half of it from 3 s.
        for step in self.decisions(from: 3, to: 10, in: decisions) {
            XCTAssertLessThanOrEqual(step.stats.targetBitsPerSecond, 1_000_000, "at \(step.atMicros) µs")
            XCTAssertGreaterThan(step.stats.targetBitsPerSecond, 500_000, "at \(step.atMicros) µs")
        }
        XCTAssertGreaterThan(self.decisions(from: 3, to: 10, in: decisions).map(\.stats.probeResults).max() ?? 0, 0,
                             "the start probes were measured")

        // Down to 300 kbit/s at 10 s: the queue grows in the feedback, the detector sees over-use within 1 s,
        // and the target is at the capacity within 2 s and never 10 % above it after.
        let overuse = try XCTUnwrap(self.decisions(from: 10, to: 20, in: decisions).first { $0.stats.usage == .overusing })
        XCTAssertLessThan(overuse.atMicros, 11_000_000)
        XCTAssertLessThanOrEqual(decision(at: 12, in: decisions).stats.targetBitsPerSecond, 300_000)
        for step in self.decisions(from: 12, to: 20, in: decisions) {
            XCTAssertLessThanOrEqual(step.stats.targetBitsPerSecond, 330_000, "at \(step.atMicros) µs")
            XCTAssertGreaterThan(step.stats.targetBitsPerSecond, 150_000, "at \(step.atMicros) µs")
        }
        XCTAssertNotNil(decision(at: 19.9, in: decisions).stats.linkCapacityBitsPerSecond)

        // Up to 3 Mbit/s at 20 s: probes find it — half of it within 1.5 s, 70 % within 6 s.
        XCTAssertGreaterThanOrEqual(decision(at: 21.5, in: decisions).stats.targetBitsPerSecond, 1_500_000)
        XCTAssertGreaterThanOrEqual(decision(at: 26, in: decisions).stats.targetBitsPerSecond, 2_100_000)
        XCTAssertFalse(self.decisions(from: 20, to: 21.5, in: decisions).allSatisfy { $0.probes.isEmpty },
                       "probes asked for after the capacity came back")
    }

    func testRecordingRoundTripsAndReplaysTheLiveRun() throws {
        var simulation = try CongestionSimulation(scenario: .steps(downAt: 3, upAt: 6, seconds: 9), recordEvents: true)
        _ = try simulation.run()
        let recording = SimulationRecording(comments: ["test"], configuration: simulation.scenario.sender.controller,
                                            events: simulation.events)
        let parsed = try SimulationRecording(parsing: recording.text)
        XCTAssertEqual(parsed, recording)
        // The replayed controller ends exactly where the live one did: the recording holds all it saw.
        let replayed = try SimulationRecording.replay(parsed.events, configuration: parsed.configuration)
        XCTAssertEqual(replayed.last?.stats, simulation.sender.controller.stats)
    }

    func testMalformedRecordingsAreRefusedWithTheirLine() {
        func refused(_ text: String, line: Int) {
            do {
                _ = try SimulationRecording(parsing: text)
                XCTFail("accepted \(text)")
            } catch {
                XCTAssertEqual(error.line, line, "\(error)")
            }
        }
        refused("s 1 2 3\n", line: 0)  // no config line
        refused("config 1 2 3\ns 1 70000 3\n", line: 2)  // sequence number beyond 16 bits
        refused("config 1 2 3\n# fine\nf 10 abc\n", line: 3)  // odd hex digits
        refused("config 1 2 3\nf 10 zz\n", line: 2)
        refused("config 1 2 x\n", line: 1)
        refused("config 1 2 3\nq 1\n", line: 2)
    }
}
