import RTP
import XCTest

/// ``DatagramKind/classify(_:)`` against RFC 7983 §7's first-byte table and RFC 5761 §4's RTP/RTCP split,
/// for every first byte and every second byte of the RTP/RTCP range.
final class DatagramDemultiplexerTests: XCTestCase {
    /// RFC 7983 §7, written out range by range (not from the code's switch).
    static func expected(first: UInt8) -> DatagramKind {
        if first <= 3 { return .stun }
        if (16...19).contains(first) { return .zrtp }
        if (20...63).contains(first) { return .dtls }
        if (64...79).contains(first) { return .turnChannel }
        return .unknown  // 4…15, 80…127, 192…255 (128…191 is RTP/RTCP, checked below)
    }

    func testEveryFirstByteOutsideRTPFallsInItsRange() {
        var counts: [DatagramKind: Int] = [:]
        for first in UInt8.min...UInt8.max where !(128...191).contains(first) {
            let kind = DatagramKind.classify([first, 0x00, 0x01])
            XCTAssertEqual(kind, Self.expected(first: first), "first byte \(first)")
            counts[kind, default: 0] += 1
        }
        XCTAssertEqual(counts, [.stun: 4, .zrtp: 4, .dtls: 44, .turnChannel: 16, .unknown: 12 + 48 + 64])
    }

    /// 128…191 with any second byte: 192…223 (RTCP packet types SR 200 … PSFB 206, RFC 5761 §4) is RTCP,
    /// everything else RTP — the marker bit set or not.
    func testRTPAndRTCPBySecondByte() {
        for first: UInt8 in [128, 0x80 | 0x10, 0x90, 191] {
            for second in UInt8.min...UInt8.max {
                let kind = DatagramKind.classify([first, second])
                XCTAssertEqual(kind, (192...223).contains(second) ? .rtcp : .rtp, "\(first), \(second)")
            }
        }
        // The edges: 191 is RTP with the marker bit and PT 63; 224 is RTP with marker and PT 96 (VP8's usual).
        XCTAssertEqual(DatagramKind.classify([0x80, 191]), .rtp)
        XCTAssertEqual(DatagramKind.classify([0x80, 192]), .rtcp)
        XCTAssertEqual(DatagramKind.classify([0x80, 223]), .rtcp)
        XCTAssertEqual(DatagramKind.classify([0x80, 224]), .rtp)
        XCTAssertEqual(DatagramKind.classify([0x80, 0x60]), .rtp, "PT 96 without the marker")
        XCTAssertEqual(DatagramKind.classify([0x80, 0xE0]), .rtp, "PT 96 with the marker")
        XCTAssertEqual(DatagramKind.classify([0x81, 0xC8]), .rtcp, "a Sender Report (PT 200)")
    }

    func testTooShortAndSlices() {
        XCTAssertEqual(DatagramKind.classify([]), .unknown)
        XCTAssertEqual(DatagramKind.classify([0x80]), .unknown, "RTP/RTCP needs its second byte")
        XCTAssertEqual(DatagramKind.classify([0x00]), .stun, "STUN and DTLS are told by one byte")
        XCTAssertEqual(DatagramKind.classify([0x16]), .dtls)
        // A slice that does not start at index 0 is read from its own start.
        let bytes: [UInt8] = [0x16, 0x80, 0xC9, 0x00]
        XCTAssertEqual(DatagramKind.classify(bytes[1...]), .rtcp)
        XCTAssertEqual(DatagramKind.classify(bytes[1..<2]), .unknown)
        XCTAssertEqual(DatagramKind.classify(bytes[2...]), .unknown, "0xC9 as a first byte: no range")
        XCTAssertEqual(DatagramKind.classify(bytes[0..<1]), .dtls)
        XCTAssertEqual(DatagramKind.allCases.count, 7)
    }
}
