import CongestionControl
import XCTest

/// The screen sender's controller wiring of ALR: what it sends (probe packets left out) feeds the detector,
/// and the probes it asks for while application-limited are the long, burst-robust kind.
final class ApplicationLimitedControllerTests: XCTestCase {
    /// Sends `bytes` every 20 ms for `seconds` (ticks every 50 ms); returns every probe cluster asked for.
    private func run(_ gcc: inout SendSideCongestionController, bytes: Int, seconds: Int64, probeTagged: Bool = false) -> [ProbeCluster] {
        var clusters = gcc.start(atMicros: 0).probes
        var sequence: UInt16 = 0
        for t in stride(from: Int64(0), to: seconds * 1_000_000, by: 10_000) {
            if t % 20_000 == 0 {
                gcc.onPacketSent(sequenceNumber: sequence, sizeBytes: bytes, atMicros: t, probeClusterID: probeTagged ? 1 : nil)
                sequence &+= 1
            }
            if t % 50_000 == 0 { clusters += gcc.onTick(atMicros: t).probes }
        }
        return clusters
    }

    func testAnApplicationLimitedSenderGetsLongProbes() throws {
        var gcc = try SendSideCongestionController(configuration: .screenSender)
        // 100 bytes every 20 ms: 40 kbit/s against a 300 kbit/s target.
        let clusters = run(&gcc, bytes: 100, seconds: 6)
        XCTAssertTrue(gcc.stats.applicationLimited)
        // The start probe (3 × 300 kbit/s for 400 ms, burst-robust whatever the sender does); 5 s later, while
        // application-limited (no feedback here, so the estimate is still 300 kbit/s): an ALR probe of 400 ms.
        XCTAssertEqual(clusters.map(\.bitsPerSecond), [900_000, 600_000])
        XCTAssertEqual(clusters.map(\.createdMicros), [0, 5_000_000])
        XCTAssertEqual(clusters.map(\.minBytes), [45_000, 30_000])
        XCTAssertEqual(clusters.map(\.measuresPastBurst), [true, true])
        XCTAssertEqual(gcc.stats.alrProbes, 1)
    }

    func testASenderThatFillsItsTargetGetsBurstRobustPeriodicProbes() throws {
        var gcc = try SendSideCongestionController(configuration: .screenSender)
        // 750 bytes every 20 ms: 300 kbit/s, the whole target.
        let clusters = run(&gcc, bytes: 750, seconds: 6)
        XCTAssertFalse(gcc.stats.applicationLimited)
        // The start probe is burst-robust (nothing is known at the start); the periodic one 5 s later too
        // (``ProbeController/Configuration/periodicProbesMeasurePastBurst``), though the sender is not
        // application-limited (no ALR probe).
        XCTAssertEqual(clusters.map(\.measuresPastBurst), [true, true])
        XCTAssertEqual(clusters.map(\.bitsPerSecond), [900_000, 450_000], "the periodic probe at 1.5 × the estimate")
        XCTAssertEqual(clusters.map(\.minBytes), [45_000, 22_500], "400 ms at 900 and 450 kbit/s")
        XCTAssertEqual(gcc.stats.alrProbes, 0)
        // Without that setting the periodic cluster is short (15 ms).
        var probing = ProbeController.Configuration.screenSender
        probing.periodicProbesMeasurePastBurst = false
        var configuration = SendSideCongestionController.Configuration.screenSender
        configuration.probing = probing
        var plain = try SendSideCongestionController(configuration: configuration)
        XCTAssertEqual(run(&plain, bytes: 750, seconds: 6).map(\.measuresPastBurst), [true, false])
    }

    /// Probe packets (padding, or media sent ahead of its turn) are not what the application sends: a sender
    /// whose every packet is a probe's stays application-limited.
    func testProbePacketsDoNotCountAsTheApplicationsOwn() throws {
        var gcc = try SendSideCongestionController(configuration: .screenSender)
        _ = run(&gcc, bytes: 750, seconds: 2, probeTagged: true)
        XCTAssertTrue(gcc.stats.applicationLimited)
    }

    /// The default (simulator) configuration has no ALR probing: its clusters stay short.
    func testALRIsOffByDefault() throws {
        var gcc = try SendSideCongestionController(configuration: .init())
        let clusters = run(&gcc, bytes: 100, seconds: 6)
        XCTAssertTrue(gcc.stats.applicationLimited, "the detector still runs (for /stats)")
        XCTAssertFalse(clusters.isEmpty)
        XCTAssertTrue(clusters.allSatisfy { !$0.measuresPastBurst })
        XCTAssertEqual(gcc.stats.alrProbes, 0)
    }
}
