import RTP
import XCTest

/// Every shape a VP8 payload descriptor is written in (RFC 7741 §4.2): no X byte, or an X byte with one of the
/// 15 non-empty combinations of I (a 7- or 15-bit PictureID, M), L (TL0PICIDX), T (TID, Y) and K (KEYIDX) — 24
/// shapes — with random field values: the written size is what the flags say, parsing gives the fields back,
/// and each shorter prefix is refused with exactly the bytes it needed. Then all 65536 first-two-byte values
/// (with enough bytes behind them) parse without trapping to a size the flags predict.
///
/// ```
///       0 1 2 3 4 5 6 7
///      +-+-+-+-+-+-+-+-+
///      |X|R|N|S|R| PID |
///      +-+-+-+-+-+-+-+-+
/// X:   |I|L|T|K| RSV   |
///      +-+-+-+-+-+-+-+-+
/// I:   |M| PictureID   |  (a second PictureID byte when M = 1)
/// L:   |   TL0PICIDX   |
/// T/K: |TID|Y| KEYIDX  |
/// ```
final class VP8DescriptorShapeTests: XCTestCase {
    private struct Shape: CustomStringConvertible {
        var pictureID: Bool, fifteenBit: Bool, tl0: Bool, temporal: Bool, key: Bool
        var hasExtension: Bool { pictureID || tl0 || temporal || key }
        /// 1, plus X's byte, plus 1 or 2 PictureID bytes, plus TL0PICIDX, plus one T/K byte.
        var size: Int {
            guard hasExtension else { return 1 }
            return 2 + (pictureID ? (fifteenBit ? 2 : 1) : 0) + (tl0 ? 1 : 0) + (temporal || key ? 1 : 0)
        }
        var description: String { "I\(pictureID ? (fifteenBit ? "15" : "7") : "-") L\(tl0 ? 1 : 0) T\(temporal ? 1 : 0) K\(key ? 1 : 0)" }
    }

    private static var shapes: [Shape] {
        var shapes: [Shape] = []
        for flags in 0..<16 {
            let pictureID = flags & 8 != 0
            for fifteenBit in pictureID ? [false, true] : [true] {
                shapes.append(Shape(pictureID: pictureID, fifteenBit: fifteenBit, tl0: flags & 4 != 0, temporal: flags & 2 != 0, key: flags & 1 != 0))
            }
        }
        return shapes
    }

    func testEveryShapeRoundTripsAndEveryPrefixSaysWhatItNeeded() throws {
        XCTAssertEqual(Self.shapes.count, 24, "15 flag combinations with X, 8 of them with I in two widths, and none")
        var generator = SplitMix64(seed: 7741)
        for shape in Self.shapes {
            for _ in 0..<20 {
                let descriptor = VP8PayloadDescriptor(
                    nonReference: Bool.random(using: &generator), startOfPartition: Bool.random(using: &generator),
                    partitionIndex: UInt8.random(in: 0...7, using: &generator),
                    pictureID: shape.pictureID ? UInt16.random(in: 0...(shape.fifteenBit ? 0x7FFF : 0x7F), using: &generator) : nil,
                    pictureIDIs15Bit: shape.fifteenBit,
                    tl0PictureIndex: shape.tl0 ? UInt8.random(in: 0...255, using: &generator) : nil,
                    temporalLayer: shape.temporal ? (UInt8.random(in: 0...3, using: &generator), Bool.random(using: &generator)) : nil,
                    keyIndex: shape.key ? UInt8.random(in: 0...31, using: &generator) : nil)
                var bytes: [UInt8] = []
                descriptor.serialize(into: &bytes)
                XCTAssertEqual(bytes.count, shape.size, "\(shape)")
                XCTAssertEqual(descriptor.size, shape.size, "\(shape)")
                XCTAssertEqual(bytes[0] & 0x80 != 0, shape.hasExtension, "\(shape): X")
                if shape.hasExtension {
                    XCTAssertEqual(bytes[1] >> 4, (shape.pictureID ? 8 : 0) | (shape.tl0 ? 4 : 0) | (shape.temporal ? 2 : 0) | (shape.key ? 1 : 0))
                    XCTAssertEqual(bytes[1] & 0x0F, 0, "RSV written as zero")
                }
                let payload = bytes + [0x9D]
                let (parsed, size) = try VP8PayloadDescriptor.parse(payload[...])
                XCTAssertEqual(parsed, descriptor, "\(shape)")
                XCTAssertEqual(size, shape.size)
                XCTAssertEqual(parsed.pictureID.map { _ in parsed.pictureIDIs15Bit }, shape.pictureID ? shape.fifteenBit : nil)
                // Each prefix: what the next field (or the first VP8 byte) needed.
                for length in 0..<payload.count {
                    let needed = Self.neededBytes(for: shape, available: length)
                    assertThrowsRTPError(try VP8PayloadDescriptor.parse(payload[0..<length]),
                                         .truncated(.vp8Descriptor, needed: needed, available: length), "\(shape) cut at \(length)")
                }
            }
        }
    }

    /// The byte count the parser asks for when `available` bytes of a descriptor of `shape` (+ 1 VP8 byte)
    /// are there: the first field that does not fit, counted up the diagram.
    private static func neededBytes(for shape: Shape, available: Int) -> Int {
        var fields: [Int] = [1]  // the first byte
        if shape.hasExtension {
            fields.append(1)  // X
            if shape.pictureID { fields += shape.fifteenBit ? [1, 1] : [1] }
            if shape.tl0 { fields.append(1) }
            if shape.temporal || shape.key { fields.append(1) }
        }
        fields.append(1)  // one byte of VP8 data
        var end = 0
        for field in fields {
            end += field
            if end > available { return end }
        }
        return end
    }

    /// All 65536 first-two-byte values, followed by eight bytes of 0xff (every further flag set, M = 1): each
    /// parses, and the size is the one its flags predict — an X byte with no flag in it included.
    func testEveryFirstTwoBytesParseToThePredictedSize() throws {
        for value in UInt16.min...UInt16.max {
            let first = UInt8(value >> 8), second = UInt8(value & 0xFF)
            let payload = [first, second] + [UInt8](repeating: 0xFF, count: 8)
            let (descriptor, size) = try VP8PayloadDescriptor.parse(payload[...])
            let shape: Shape
            if first & 0x80 == 0 {
                shape = Shape(pictureID: false, fifteenBit: true, tl0: false, temporal: false, key: false)
            } else {
                shape = Shape(pictureID: second & 0x80 != 0, fifteenBit: true, tl0: second & 0x40 != 0, temporal: second & 0x20 != 0,
                              key: second & 0x10 != 0)
            }
            // The X byte counts even with no flag set in it (the writer never sends that; a reader accepts it).
            let predicted = first & 0x80 == 0 ? 1 : max(2, shape.size)
            XCTAssertEqual(size, predicted, "\(value)")
            XCTAssertEqual(descriptor.partitionIndex, first & 0x07)
            XCTAssertEqual(descriptor.startOfPartition, first & 0x10 != 0)
            XCTAssertEqual(descriptor.nonReference, first & 0x20 != 0)
            XCTAssertEqual(descriptor.isFrameStart, first & 0x17 == 0x10)
            if shape.pictureID { XCTAssertEqual(descriptor.pictureID, 0x7FFF) }
            if shape.tl0 { XCTAssertEqual(descriptor.tl0PictureIndex, 0xFF) }
            if shape.temporal { XCTAssertEqual(descriptor.temporalLayer?.id, 3) }
            if shape.key { XCTAssertEqual(descriptor.keyIndex, 31) }
        }
    }

    /// Equality ignores the PictureID width when there is no PictureID, and compares it when there is one:
    /// 0x7F in 7 bits and 0x7F in 15 bits are different descriptors on the wire.
    func testEqualityFollowsTheWire() {
        XCTAssertEqual(VP8PayloadDescriptor(startOfPartition: true, pictureIDIs15Bit: false),
                       VP8PayloadDescriptor(startOfPartition: true, pictureIDIs15Bit: true))
        XCTAssertNotEqual(VP8PayloadDescriptor(startOfPartition: true, pictureID: 0x7F, pictureIDIs15Bit: false),
                          VP8PayloadDescriptor(startOfPartition: true, pictureID: 0x7F, pictureIDIs15Bit: true))
        XCTAssertNotEqual(VP8PayloadDescriptor(startOfPartition: true, temporalLayer: (1, true)),
                          VP8PayloadDescriptor(startOfPartition: true, temporalLayer: (1, false)))
        var seven: [UInt8] = []
        VP8PayloadDescriptor(startOfPartition: true, pictureID: 0x7F, pictureIDIs15Bit: false).serialize(into: &seven)
        var fifteen: [UInt8] = []
        VP8PayloadDescriptor(startOfPartition: true, pictureID: 0x7F, pictureIDIs15Bit: true).serialize(into: &fifteen)
        XCTAssertEqual(seven, hex("90 80 7f"))
        XCTAssertEqual(fifteen, hex("90 80 80 7f"))
    }
}
