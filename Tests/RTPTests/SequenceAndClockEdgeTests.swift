import RTP
import XCTest

/// The module's counters and clocks at their edges: 16-bit sequence numbers at exactly half the circle (the
/// RFC 1982 case with no answer), the unwrapper's extended numbers there, NTP timestamps (RFC 3550 §4, RFC 5905
/// §6) to the 2⁻³² s and across the 2036 era rollover, and the RTP timestamp mapper's rounding at 90 kHz and
/// 48 kHz around its origin and the 32-bit wrap.
final class SequenceAndClockEdgeTests: XCTestCase {
    // MARK: - Sequence numbers

    /// For any two numbers exactly one holds: equal, a before b, b before a — except at exactly 32768 apart,
    /// where neither comes first (RFC 1982 leaves it undefined; both directions say no, so no ordering built on
    /// it can contradict itself).
    func testOrderingIsAntisymmetricAndUndefinedOnlyAtHalfTheCircle() {
        for a: UInt16 in [0, 1, 100, 32_767, 32_768, 40_000, 65_534, 65_535] {
            for b in UInt16.min...UInt16.max {
                let before = SequenceNumber.isBefore(a, b), after = SequenceNumber.isBefore(b, a)
                if b &- a == 32_768 {
                    XCTAssertFalse(before || after, "\(a), \(b): half the circle")
                    XCTAssertEqual(SequenceNumber.distance(from: a, to: b), -32_768)
                } else {
                    XCTAssertEqual([a == b, before, after].filter { $0 }.count, 1, "\(a), \(b)")
                    XCTAssertEqual(SequenceNumber.isAtOrAfter(b, a), before || a == b, "\(a), \(b)")
                    XCTAssertEqual(Int(a &+ UInt16(bitPattern: Int16(SequenceNumber.distance(from: a, to: b)))), Int(b))
                }
            }
        }
        XCTAssertEqual(SequenceNumber.distance(from: 0, to: 32_767), 32_767)
        XCTAssertEqual(SequenceNumber.distance(from: 32_767, to: 0), -32_767)
    }

    /// The unwrapper places each number nearest the highest seen: 32767 ahead is newer, 32768 away is taken as
    /// older, and a number before the first one seen may be negative. Peeking never moves the highest.
    func testUnwrapperAtHalfTheCircle() {
        var unwrapper = SequenceNumberUnwrapper()
        XCTAssertNil(unwrapper.highest)
        XCTAssertEqual(unwrapper.peek(40_000), 40_000, "before the first: taken as is")
        XCTAssertNil(unwrapper.highest)
        XCTAssertEqual(unwrapper.unwrap(0), 0)
        XCTAssertEqual(unwrapper.peek(32_767), 32_767)
        XCTAssertEqual(unwrapper.peek(32_768), -32_768, "half the circle: older")
        XCTAssertEqual(unwrapper.unwrap(65_535), -1, "just before the first one seen")
        XCTAssertEqual(unwrapper.highest, 0)
        XCTAssertEqual(unwrapper.unwrap(32_767), 32_767)
        XCTAssertEqual(unwrapper.unwrap(65_535), -1, "32768 away from 32767: taken as older, the −1 of before")
        XCTAssertEqual(unwrapper.highest, 32_767)
        XCTAssertEqual(unwrapper.unwrap(0), 0, "32767 behind: the same 0")
        XCTAssertEqual(unwrapper.unwrap(65_000), 65_000)
        XCTAssertEqual(unwrapper.unwrap(0), 65_536, "536 ahead of 65000: the next cycle")
        XCTAssertEqual(unwrapper.highest, 65_536)
        // Steps of 32767 forward never lose a cycle.
        var stepping = SequenceNumberUnwrapper()
        var sequence: UInt16 = 0
        for step in 0...20 {
            XCTAssertEqual(stepping.unwrap(sequence), Int64(step) * 32_767)
            sequence &+= 32_767
        }
    }

    // MARK: - NTP

    func testNTPFromUnixMicrosecondsToTheFraction() {
        let epoch = NTPTimestamp(unixMicroseconds: 0)
        XCTAssertEqual(epoch.seconds, 2_208_988_800)
        XCTAssertEqual(epoch.fraction, 0)
        XCTAssertEqual(epoch.unixMicroseconds, 0)
        for (micros, fraction): (UInt64, UInt32) in [(500_000, 0x8000_0000), (250_000, 0x4000_0000), (125_000, 0x2000_0000),
                                                     (1, 4294), (999_999, 0xFFFF_EF39)] {
            let ntp = NTPTimestamp(unixMicroseconds: micros)
            XCTAssertEqual(ntp.fraction, fraction, "\(micros) µs: rounded down to 2^-32 s")
            let back = ntp.unixMicroseconds!
            XCTAssertTrue(back == micros || back == micros - 1, "\(micros) µs read back as \(back)")
        }
        // Before 1970 there is no Unix time; the last 2^-32 s before the epoch is not the epoch.
        XCTAssertNil(NTPTimestamp(seconds: 2_208_988_799, fraction: 0xFFFF_FFFF).unixMicroseconds)
        XCTAssertNil(NTPTimestamp(rawValue: 0).unixMicroseconds)
        XCTAssertEqual(NTPTimestamp(seconds: 0x1234_5678, fraction: 0x9ABC_DEF0).compact, 0x5678_9ABC)
        XCTAssertEqual(NTPTimestamp(seconds: 1, fraction: 0xABC).description, "1.abc")
        // Distinct microseconds give strictly increasing timestamps (1 µs is about 4295 units).
        var generator = SplitMix64(seed: 1900)
        let micros = (0..<2000).map { _ in UInt64.random(in: 0...2_000_000_000_000_000, using: &generator) }.sorted()
        for (a, b) in zip(micros, micros.dropFirst()) where a < b {
            XCTAssertLessThan(NTPTimestamp(unixMicroseconds: a), NTPTimestamp(unixMicroseconds: b))
        }
    }

    /// NTP seconds wrap on 2036-02-07 06:28:16 UTC (Unix 2085978496 s); era 1 is not modelled, so the seconds
    /// restart at 0 — but the compact 16.16 values report blocks use wrap too, and the round-trip time
    /// A − LSR − DLSR across the rollover comes out right.
    func testRoundTripTimeAcrossThe2036Rollover() throws {
        let rollover: UInt64 = 2_085_978_496_000_000
        let sent = NTPTimestamp(unixMicroseconds: rollover - 500_000)
        XCTAssertEqual(sent.seconds, 0xFFFF_FFFF)
        XCTAssertEqual(sent.compact, 0xFFFF_8000)
        let arrival = NTPTimestamp(unixMicroseconds: rollover + 500_000)
        XCTAssertEqual(arrival.seconds, 0, "era 1 starts again at 0")
        XCTAssertEqual(arrival.compact, 0x0000_8000)
        XCTAssertNil(arrival.unixMicroseconds, "read as 1900: the limit of not modelling eras")
        let block = RTCPReportBlock(ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequenceNumber: 0, jitter: 0,
                                    lastSenderReport: sent.compact, delaySinceLastSenderReport: 0x4000)
        XCTAssertEqual(try XCTUnwrap(block.roundTripTimeMilliseconds(arrival: arrival)), 750, accuracy: 1e-9)
    }

    // MARK: - RTP timestamps

    /// Ticks are counted down from the exact µs difference: at 90 kHz one tick is 11.1 µs, at 48 kHz 20.8 µs;
    /// before the origin they count backwards the same way (towards the origin).
    func testMapperRoundingAroundTheOrigin() {
        let video = RTPTimestampMapper(offset: 1000, originMicroseconds: 1_000_000)
        XCTAssertEqual(video.clockRate, 90_000)
        XCTAssertEqual(video.rtpTimestamp(forMicroseconds: 1_000_011), 1000, "0.99 ticks")
        XCTAssertEqual(video.rtpTimestamp(forMicroseconds: 1_000_012), 1001, "1.08 ticks")
        XCTAssertEqual(video.rtpTimestamp(forMicroseconds: 999_989), 1000, "0.99 ticks back")
        XCTAssertEqual(video.rtpTimestamp(forMicroseconds: 999_988), 999, "1.08 ticks back")
        XCTAssertEqual(video.rtpTimestamp(forMicroseconds: 0), 1000 &- 90_000, "before the origin wraps below 0")
        let audio = RTPTimestampMapper(clockRate: 48_000, offset: 0, originMicroseconds: 0)
        XCTAssertEqual(audio.rtpTimestamp(forMicroseconds: 20), 0)
        XCTAssertEqual(audio.rtpTimestamp(forMicroseconds: 21), 1)
        XCTAssertEqual(audio.rtpTimestamp(forMicroseconds: 20_000), 960, "a 20 ms Opus frame")
        XCTAssertEqual(audio.rtpTimestamp(forMicroseconds: 1_000_000), 48_000)
    }

    /// The 32-bit wrap: 47721.858 s of 90 kHz ticks; the mapper keeps counting through it without drift, and
    /// a frame every 1/30 s (capture times in whole µs) advances within a tick of 3000, never drifting.
    func testMapperAcrossThe32BitWrap() {
        let mapper = RTPTimestampMapper(offset: 0xFFFF_FFFF, originMicroseconds: 7)
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 7 + 12), 0, "one tick past 2^32 − 1 is 0")
        let wrapMicros: UInt64 = (1 << 32) * 1_000_000 / 90_000
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 7 + wrapMicros + 12), 0xFFFF_FFFF &+ UInt32(truncatingIfNeeded: (wrapMicros + 12) * 9 / 100))
        var previous = mapper.rtpTimestamp(forMicroseconds: 7)
        for frame in UInt64(1)...3000 {
            let micros = 7 + frame * 1_000_000 / 30
            let now = mapper.rtpTimestamp(forMicroseconds: micros)
            XCTAssertTrue((2999...3001).contains(now &- previous), "frame \(frame): \(now &- previous) ticks")
            XCTAssertTrue((0...1).contains(UInt32(truncatingIfNeeded: 0xFFFF_FFFF + frame * 3000) &- now), "frame \(frame): no drift")
            previous = now
        }
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 7 + 100_000_000), 0xFFFF_FFFF &+ 9_000_000, "100 s exactly")
    }
}
