@testable import Sharing
import XCTest

/// Each viewer's current send rate in `/stats`: the life average on the first read, then over windows of at
/// least a second, so a viewer whose rate changes shows the new rate within two reads.
final class SendRateMeterTests: XCTestCase {
    func testFirstReadIsTheLifeAverageThenWindowsOfAtLeastASecond() {
        var meter = SendRateMeter()
        // 250 000 bytes in 2 s: 1000 kbps.
        XCTAssertEqual(meter.kbps(id: "a", bytes: 250_000, ageMicros: 2_000_000, nowMicros: 10_000_000), 1000, accuracy: 0.01)
        // 0.5 s later at 2000 kbps (125 000 bytes more): the window from the first read gives 2000.
        XCTAssertEqual(meter.kbps(id: "a", bytes: 375_000, ageMicros: 0, nowMicros: 10_500_000), 2000, accuracy: 0.01)
        // 1 s after the first read: still from it (62 500 more bytes in 0.5 s = 1000 kbps; 187 500 in 1 s = 1500).
        XCTAssertEqual(meter.kbps(id: "a", bytes: 437_500, ageMicros: 0, nowMicros: 11_000_000), 1500, accuracy: 0.01)
        // The rate drops to 0: a window later the meter says so (no bytes for 1.2 s since the sample at 11 s).
        _ = meter.kbps(id: "a", bytes: 437_500, ageMicros: 0, nowMicros: 12_100_000)
        XCTAssertEqual(meter.kbps(id: "a", bytes: 437_500, ageMicros: 0, nowMicros: 12_200_000), 0, accuracy: 0.01)
    }

    func testViewersAreKeptApartAndForgotten() {
        var meter = SendRateMeter()
        XCTAssertEqual(meter.kbps(id: "a", bytes: 125_000, ageMicros: 1_000_000, nowMicros: 5_000_000), 1000, accuracy: 0.01)
        XCTAssertEqual(meter.kbps(id: "b", bytes: 12_500, ageMicros: 1_000_000, nowMicros: 5_000_000), 100, accuracy: 0.01)
        meter.keep(only: ["b"])
        // "a" comes back as new: its life average again, not a window from a forgotten sample.
        XCTAssertEqual(meter.kbps(id: "a", bytes: 500_000, ageMicros: 4_000_000, nowMicros: 6_000_000), 1000, accuracy: 0.01)
        XCTAssertEqual(meter.kbps(id: "x", bytes: 0, ageMicros: 0, nowMicros: 6_000_000), 0, "a viewer of no age and no bytes")
    }
}
