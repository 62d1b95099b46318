import RTP
import XCTest

/// The VP8 payload header at the start of a frame (RFC 7741 §4.3, RFC 6386 §9.1): the 3-byte frame tag —
/// P (inverse key frame), VER (3 bits), H (show_frame) and the 19-bit first partition size, little-endian —
/// and for key frames the start code `9d 01 2a` and two 16-bit little-endian fields of 14-bit dimension and
/// 2-bit scale.
///
/// Fixture origin: computed by hand from RFC 6386 §9.1 (frame tag bit order, least significant bit first) for a
/// 1920×1080 key frame with non-zero scaling bits and the first partition size 0x12345, and the largest inter
/// frame tag.
final class VP8FrameHeaderTests: XCTestCase {
    static let keyFrame = hex("""
        b0 68 24           # tag 0x2468b0: P=0 (key) VER=0 H=1 | first partition size 0x12345 (74565)
        9d 01 2a           # start code
        80 47              # 0x4780: width 1920 | horizontal scale 1
        38 84              # 0x8438: height 1080 | vertical scale 2
        """)

    func testKeyFrameFieldByField() throws {
        let header = try VP8FrameHeader(parsing: Self.keyFrame[...])
        XCTAssertTrue(header.isKeyframe)
        XCTAssertEqual(header.version, 0)
        XCTAssertTrue(header.showFrame)
        XCTAssertEqual(header.firstPartitionSize, 0x12345)
        XCTAssertEqual(header.width, 1920, "the scaling bits are not part of the width")
        XCTAssertEqual(header.height, 1080)
        XCTAssertTrue(VP8FrameHeader.isKeyframe(Self.keyFrame[...]))
        // Largest dimensions: 14 bits each, whatever the scale bits.
        let largest = hex("10 00 00 9d 01 2a ff ff ff 3f")
        let big = try VP8FrameHeader(parsing: largest[...])
        XCTAssertEqual(big.width, 16_383)
        XCTAssertEqual(big.height, 16_383)
        XCTAssertEqual(big.firstPartitionSize, 0)
    }

    /// The largest inter frame tag: P = 1, VER = 3, H = 0, size 2¹⁹ − 1. Three bytes are enough for an inter
    /// frame, which has no start code or dimensions.
    func testInterFrameTagAtItsLargest() throws {
        let header = try VP8FrameHeader(parsing: hex("e7 ff ff")[...])
        XCTAssertFalse(header.isKeyframe)
        XCTAssertEqual(header.version, 3)
        XCTAssertFalse(header.showFrame)
        XCTAssertEqual(header.firstPartitionSize, 0x7_FFFF)
        XCTAssertNil(header.width)
        XCTAssertNil(header.height)
    }

    /// Every combination of the tag's low five bits (P, VER, H) reads back as written, with a size spread over
    /// all three bytes; the static key frame check agrees with P for every first byte.
    func testEveryFlagCombinationOfTheTag() throws {
        for flags in UInt32(0)..<32 {
            let tag = UInt32(0x5_5555) << 5 | flags
            var bytes = [UInt8(tag & 0xFF), UInt8(tag >> 8 & 0xFF), UInt8(tag >> 16)]
            if flags & 1 == 0 { bytes += hex("9d 01 2a 01 00 01 00") }
            let header = try VP8FrameHeader(parsing: bytes[...])
            XCTAssertEqual(header.isKeyframe, flags & 1 == 0, "\(flags)")
            XCTAssertEqual(UInt32(header.version), flags >> 1 & 7, "\(flags)")
            XCTAssertEqual(header.showFrame, flags & 0x10 != 0, "\(flags)")
            XCTAssertEqual(header.firstPartitionSize, 0x5_5555, "\(flags)")
        }
        for first in UInt8.min...UInt8.max {
            XCTAssertEqual(VP8FrameHeader.isKeyframe([first, 0, 0][...]), first & 1 == 0, "\(first)")
        }
    }

    /// A key frame needs 10 bytes and an inter frame 3: each shorter prefix says which it needed; a key
    /// frame with any byte of its start code wrong is refused.
    func testTruncationsAndStartCode() {
        for length in 0..<Self.keyFrame.count {
            let needed = length < 3 ? 3 : 10
            assertThrowsRTPError(try VP8FrameHeader(parsing: Self.keyFrame[0..<length]),
                                 .truncated(.vp8PayloadHeader, needed: needed, available: length), "\(length) bytes")
        }
        for index in 3...5 {
            var bytes = Self.keyFrame
            bytes[index] ^= 0x01
            assertThrowsRTPError(try VP8FrameHeader(parsing: bytes[...]),
                                 .malformed(.vp8PayloadHeader, "key frame without start code 9d 01 2a"), "byte \(index)")
        }
        // The same bytes with P = 1 are an inter frame: the "start code" is just data.
        var inter = Self.keyFrame
        inter[0] |= 1
        inter[3] = 0
        XCTAssertNoThrow(try VP8FrameHeader(parsing: inter[...]))
        XCTAssertNoThrow(try VP8FrameHeader(parsing: inter[0..<3]))
    }

    /// What the depayloader reports as a key frame is this same P bit, read from the reassembled frame.
    func testDepayloadedFramesCarryTheKeyFrameBit() throws {
        var payloader = try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: 1, initialPictureID: 0, maxPacketSize: 20)
        var depayloader = VP8Depayloader()
        var frames: [VP8Depayloader.Frame] = []
        for (index, frame) in [Self.keyFrame, hex("e7 ff ff 00 11"), Self.keyFrame].enumerated() {
            for packet in try payloader.packets(frame: frame[...], rtpTimestamp: UInt32(index) * 3000) {
                frames += try depayloader.insert(packet, arrivalMilliseconds: 0)
            }
        }
        XCTAssertEqual(frames.map(\.isKeyframe), [true, false, true])
        XCTAssertEqual(try frames.map { try VP8FrameHeader(parsing: $0.data[...]).isKeyframe }, [true, false, true])
    }
}
