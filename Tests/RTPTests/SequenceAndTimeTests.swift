import RTP
import XCTest

final class SequenceAndTimeTests: XCTestCase {
    func testSequenceDistanceWrapsAt65535() {
        XCTAssertEqual(SequenceNumber.distance(from: 65535, to: 0), 1)
        XCTAssertEqual(SequenceNumber.distance(from: 65535, to: 1), 2)
        XCTAssertEqual(SequenceNumber.distance(from: 1, to: 65535), -2)
        XCTAssertEqual(SequenceNumber.distance(from: 100, to: 100), 0)
        XCTAssertTrue(SequenceNumber.isBefore(65530, 3))
        XCTAssertFalse(SequenceNumber.isBefore(3, 65530))
        XCTAssertTrue(SequenceNumber.isAtOrAfter(3, 3))
    }

    func testUnwrapperCountsCyclesAndToleratesReordering() {
        var unwrapper = SequenceNumberUnwrapper()
        XCTAssertEqual(unwrapper.unwrap(65534), 65534)
        XCTAssertEqual(unwrapper.unwrap(65535), 65535)
        XCTAssertEqual(unwrapper.unwrap(1), 65537)
        XCTAssertEqual(unwrapper.unwrap(0), 65536)  // late, before the highest
        XCTAssertEqual(unwrapper.highest, 65537)
        XCTAssertEqual(unwrapper.unwrap(65535), 65535)  // late across the wrap
        XCTAssertEqual(unwrapper.peek(2), 65538)
        XCTAssertEqual(unwrapper.highest, 65537)
        // Many cycles.
        var sequence: UInt16 = 65535
        var last: Int64 = 0
        for _ in 0..<300_000 {
            sequence &+= 1
            last = unwrapper.unwrap(sequence)
        }
        XCTAssertEqual(last, 65535 + 300_000)
    }

    func testNTPTimestampFromUnixTime() {
        // 2024-01-01T00:00:00.5Z: Unix 1704067200.5 s → NTP seconds 3913056000, fraction 2^31.
        let ntp = NTPTimestamp(unixMicroseconds: 1_704_067_200_500_000)
        XCTAssertEqual(ntp.seconds, 3_913_056_000)
        XCTAssertEqual(ntp.fraction, 0x8000_0000)
        XCTAssertEqual(ntp.compact, UInt32(truncatingIfNeeded: 3_913_056_000 << 16) | 0x8000)
        XCTAssertEqual(ntp.unixMicroseconds, 1_704_067_200_500_000)
        // Round trip of arbitrary microseconds loses at most 1 µs.
        for micros: UInt64 in [0, 1, 999_999, 1_234_567_890_123_456] {
            let back = NTPTimestamp(unixMicroseconds: micros).unixMicroseconds!
            XCTAssertLessThanOrEqual(micros - back, 1)
        }
    }

    struct FixedClock: WallClock {
        var micros: UInt64
        func unixMicroseconds() -> UInt64 { micros }
    }

    func testWallClockIsInjected() {
        let clock = FixedClock(micros: 1_704_067_200_000_000)
        XCTAssertEqual(clock.ntpNow(), NTPTimestamp(seconds: 3_913_056_000, fraction: 0))
    }

    func testRTPTimestampsFromCaptureTime() {
        let mapper = RTPTimestampMapper(offset: 0xFFFF_FF00, originMicroseconds: 5_000_000)
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 5_000_000), 0xFFFF_FF00)
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 5_033_333), 0xFFFF_FF00 &+ 2999)  // 33.333 ms
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 6_000_000), 0xFFFF_FF00 &+ 90_000)  // wraps
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 4_000_000), 0xFFFF_FF00 &- 90_000)
        // No drift after a day of frames.
        XCTAssertEqual(mapper.rtpTimestamp(forMicroseconds: 5_000_000 + 86_400_000_000), 0xFFFF_FF00 &+ UInt32(7_776_000_000 % (1 << 32)))
    }

    func testSeededGeneratorIsReproducible() {
        var a = SplitMix64(seed: 42)
        var b = SplitMix64(seed: 42)
        XCTAssertEqual((0..<8).map { _ in a.next() }, (0..<8).map { _ in b.next() })
        var c = SplitMix64(seed: 43)
        var d = SplitMix64(seed: 42)
        XCTAssertNotEqual(d.next(), c.next())
    }

    func testDemultiplexerFollowsRFC7983() {
        XCTAssertEqual(DatagramKind.classify([]), .unknown)
        for first in 0...255 {
            let kind = DatagramKind.classify([UInt8(first), 0x60])
            switch first {
            case 0...3: XCTAssertEqual(kind, .stun, "\(first)")
            case 16...19: XCTAssertEqual(kind, .zrtp, "\(first)")
            case 20...63: XCTAssertEqual(kind, .dtls, "\(first)")
            case 64...79: XCTAssertEqual(kind, .turnChannel, "\(first)")
            case 128...191: XCTAssertEqual(kind, .rtp, "\(first)")
            default: XCTAssertEqual(kind, .unknown, "\(first)")
            }
        }
        // RTP vs RTCP by the second byte (RFC 5761 §4).
        for second in 0...255 {
            let kind = DatagramKind.classify([0x80, UInt8(second)])
            XCTAssertEqual(kind, (192...223).contains(second) ? .rtcp : .rtp, "\(second)")
        }
        XCTAssertEqual(DatagramKind.classify([0x80]), .unknown)
        XCTAssertEqual(DatagramKind.classify(hex("00 01 00 00 21 12 a4 42")), .stun)  // Binding request
        XCTAssertEqual(DatagramKind.classify(hex("16 fe fd 00 00")), .dtls)  // DTLS 1.2 handshake
        XCTAssertEqual(DatagramKind.classify(hex("80 c8 00 06")), .rtcp)  // SR
        XCTAssertEqual(DatagramKind.classify(hex("90 e0 2b 7c")), .rtp)  // VP8 with marker
        // A slice works from its own start.
        let bytes = hex("ff 81 c9")
        XCTAssertEqual(DatagramKind.classify(bytes[1...]), .rtcp)
    }
}
