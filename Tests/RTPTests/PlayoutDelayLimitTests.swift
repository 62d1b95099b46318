import RTP
import XCTest

/// The playout-delay extension's two 12-bit fields (libwebrtc `rtp-hdrext/playout-delay`: MIN in the top 12
/// bits of the 3 data bytes, MAX in the low 12, both in 10 ms units) at every value on each side, in both
/// RFC 8285 forms, and the element sizes and limits that are refused.
final class PlayoutDelayLimitTests: XCTestCase {
    /// Every MAX with MIN = 0, and every MIN with MAX = 4095: the nibbles land where the layout says and read
    /// back as written.
    func testEveryTwelveBitValueOnEachSide() throws {
        var pairs: [(UInt16, UInt16)] = (0...PlayoutDelay.maximumUnits).map { (0, $0) }
        pairs += (0...PlayoutDelay.maximumUnits).map { ($0, PlayoutDelay.maximumUnits) }
        for (minimum, maximum) in pairs {
            let limits = try PlayoutDelay.Limits(minimumUnits: minimum, maximumUnits: maximum)
            let bytes = limits.bytes
            XCTAssertEqual(bytes, [UInt8(minimum >> 4), UInt8(minimum & 0xF) << 4 | UInt8(maximum >> 8), UInt8(maximum & 0xFF)],
                           "\(minimum)…\(maximum)")
            let block = try RTPHeaderExtension.appendingOneByte(PlayoutDelay.element(id: 6, limits: limits), to: nil)
            XCTAssertEqual(try PlayoutDelay.read(from: block, id: 6), limits, "\(minimum)…\(maximum)")
        }
        XCTAssertEqual(PlayoutDelay.maximumUnits, 4095)
        XCTAssertEqual(PlayoutDelay.granularityMilliseconds, 10)
    }

    /// 4095 is the largest unit count on either side (40.95 s); 4096 on either side is refused, as is MIN above
    /// MAX; MIN = MAX is allowed.
    func testLimitsAtAndPast4095() throws {
        let largest = try PlayoutDelay.Limits(minimumUnits: 4095, maximumUnits: 4095)
        XCTAssertEqual(largest.bytes, [0xFF, 0xFF, 0xFF])
        XCTAssertEqual(try PlayoutDelay.Limits(minimumUnits: 17, maximumUnits: 17).bytes, [0x01, 0x10, 0x11])
        for (minimum, maximum): (UInt16, UInt16) in [(4095, 4096), (4096, 4096), (0, .max), (1, 0), (4095, 4094)] {
            assertThrowsRTPError(try PlayoutDelay.Limits(minimumUnits: minimum, maximumUnits: maximum), nil, "\(minimum)…\(maximum)")
        }
    }

    /// Read from a two-byte form block (RFC 8285 §4.3) as well; an element of 2 or 4 bytes under the ID is
    /// refused with its size.
    func testTwoByteFormAndWrongSizes() throws {
        let limits = try PlayoutDelay.Limits(minimumUnits: 0x123, maximumUnits: 0xABC)
        let twoByte = try RTPHeaderExtension(elements: [.init(id: 200, data: [][...]), PlayoutDelay.element(id: 6, limits: limits)])
        XCTAssertTrue(twoByte.isTwoByte)
        XCTAssertEqual(try PlayoutDelay.read(from: twoByte, id: 6), limits)
        for size in [1, 2, 4] {
            let block = try RTPHeaderExtension(elements: [.init(id: 6, data: Array(repeating: 0, count: size)[...])])
            assertThrowsRTPError(try PlayoutDelay.read(from: block, id: 6),
                                 .malformed(.headerExtension, "playout delay of \(size) bytes, expected 3"))
        }
    }
}
