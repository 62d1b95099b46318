import RTP
import XCTest

/// VP8 payload descriptor, payload header (RFC 7741 §4.2, §4.3) and the payloader.
final class VP8Tests: XCTestCase {
    // MARK: Descriptor

    /// Descriptors built by hand from the RFC 7741 §4.2 diagram, one per optional-field combination.
    func testDescriptorVariantsRoundTrip() throws {
        let cases: [(String, [UInt8], VP8PayloadDescriptor)] = [
            ("no X byte, S, PID 0", hex("10"), VP8PayloadDescriptor(startOfPartition: true)),
            ("N, PID 3", hex("23"), VP8PayloadDescriptor(nonReference: true, startOfPartition: false, partitionIndex: 3)),
            ("7-bit PictureID", hex("90 80 7f"),
             VP8PayloadDescriptor(startOfPartition: true, pictureID: 127, pictureIDIs15Bit: false)),
            ("15-bit PictureID", hex("90 80 ab cd"),
             VP8PayloadDescriptor(startOfPartition: true, pictureID: 0x2BCD)),
            ("all fields", hex("90 f0 80 01 17 b5"),
             VP8PayloadDescriptor(startOfPartition: true, pictureID: 1, tl0PictureIndex: 0x17,
                                  temporalLayer: (2, true), keyIndex: 0x15)),
            ("K only", hex("80 10 1f"), VP8PayloadDescriptor(startOfPartition: false, keyIndex: 0x1F)),
        ]
        for (name, bytes, expected) in cases {
            let payload = bytes + [0x42]  // one byte of VP8 data
            let (descriptor, size) = try VP8PayloadDescriptor.parse(payload[...])
            XCTAssertEqual(descriptor, expected, name)
            XCTAssertEqual(size, bytes.count, name)
            XCTAssertEqual(descriptor.size, bytes.count, name)
            var written: [UInt8] = []
            descriptor.serialize(into: &written)
            XCTAssertEqual(written, bytes, name)
            // Truncated anywhere (including dropping the VP8 byte) it throws.
            for length in 0..<payload.count {
                assertThrowsRTPError(try VP8PayloadDescriptor.parse(payload[0..<length]), nil, "\(name) @\(length)")
            }
        }
    }

    func testKeyframeDetectionFromPayloadHeader() throws {
        // A 640×480 key frame header: P = 0, show_frame, first partition size, start code, dimensions.
        let key = hex("50 2a 00 9d 01 2a 80 02 e0 01")
        let header = try VP8FrameHeader(parsing: key[...])
        XCTAssertTrue(header.isKeyframe)
        XCTAssertTrue(header.showFrame)
        XCTAssertEqual(header.version, 0)
        XCTAssertEqual(header.firstPartitionSize, 0x50 >> 5 | 0x2A << 3)
        XCTAssertEqual(header.width, 640)
        XCTAssertEqual(header.height, 480)
        XCTAssertTrue(VP8FrameHeader.isKeyframe(key[...]))
        // Inter frame: P = 1.
        let inter = hex("31 01 00")
        XCTAssertFalse(try VP8FrameHeader(parsing: inter[...]).isKeyframe)
        XCTAssertFalse(VP8FrameHeader.isKeyframe(inter[...]))
        XCTAssertFalse(VP8FrameHeader.isKeyframe([][...]))
        // A key frame without its start code, or cut short, is refused.
        assertThrowsRTPError(try VP8FrameHeader(parsing: hex("50 2a 00 9d 01 2b 80 02 e0 01")[...]))
        for length in 0..<key.count { assertThrowsRTPError(try VP8FrameHeader(parsing: key[0..<length])) }
    }

    // MARK: Payloader

    func testPayloaderSplitsFramesWithinTheSizeLimit() throws {
        var payloader = try VP8Payloader(ssrc: 0xCAFE_BABE, payloadType: 96, initialSequenceNumber: 65533,
                                         initialPictureID: 0x7FFE)
        var generator = SplitMix64(seed: 7)
        let frame = [UInt8(0x50)] + randomBytes(3000, using: &generator)
        let packets = try payloader.packetize(frame: frame, rtpTimestamp: 123_456)
        XCTAssertEqual(packets.count, 3)  // 1184 bytes of VP8 per packet at most
        var reassembled: [UInt8] = []
        for (index, bytes) in packets.enumerated() {
            XCTAssertLessThanOrEqual(bytes.count, 1200)
            let packet = try RTPPacket(parsing: bytes)
            XCTAssertEqual(packet.ssrc, 0xCAFE_BABE)
            XCTAssertEqual(packet.payloadType, 96)
            XCTAssertEqual(packet.timestamp, 123_456)
            XCTAssertEqual(packet.sequenceNumber, 65533 &+ UInt16(index))  // 65533, 65534, 65535
            XCTAssertEqual(packet.marker, index == packets.count - 1)
            let (descriptor, size) = try VP8PayloadDescriptor.parse(packet.payload)
            XCTAssertEqual(size, 4)
            XCTAssertEqual(descriptor.startOfPartition, index == 0)
            XCTAssertEqual(descriptor.partitionIndex, 0)
            XCTAssertEqual(descriptor.pictureID, 0x7FFE)
            XCTAssertTrue(descriptor.pictureIDIs15Bit)
            reassembled += packet.payload.dropFirst(size)
        }
        XCTAssertEqual(reassembled, frame)
        // Near-equal pieces: 3001 bytes → 1001, 1000, 1000.
        XCTAssertEqual(packets.map(\.count), [1017, 1016, 1016])
        // The first packet's bytes, header and descriptor in full.
        XCTAssertEqual(Array(packets[0][0..<16]), hex("80 60 ff fd 00 01 e2 40 ca fe ba be 90 80 ff fe"))

        // The next frame continues the sequence across the wrap and increments the PictureID (wrapping at 2^15).
        let second = try payloader.packetize(frame: [0x31, 0x01, 0x00], rtpTimestamp: 126_456)
        let third = try payloader.packetize(frame: [0x31, 0x01, 0x00], rtpTimestamp: 129_456)
        let p2 = try RTPPacket(parsing: second[0])
        let p3 = try RTPPacket(parsing: third[0])
        XCTAssertEqual(p2.sequenceNumber, 0)
        XCTAssertEqual(p3.sequenceNumber, 1)
        XCTAssertTrue(p2.marker)
        XCTAssertEqual(try VP8PayloadDescriptor.parse(p2.payload).0.pictureID, 0x7FFF)
        XCTAssertEqual(try VP8PayloadDescriptor.parse(p3.payload).0.pictureID, 0)
        XCTAssertEqual(Array(second[0]), hex("80 e0 00 00 00 01 ed f8 ca fe ba be 90 80 ff ff 31 01 00"))
    }

    func testPayloaderHonoursAConfiguredMaximum() throws {
        var payloader = try VP8Payloader(ssrc: 1, payloadType: 100, initialSequenceNumber: 0, initialPictureID: 0,
                                         maxPacketSize: 17)
        let packets = try payloader.packetize(frame: [1, 2, 3], rtpTimestamp: 0)
        XCTAssertEqual(packets.map(\.count), [17, 17, 17])
        for size in [0, 10, 16] {
            XCTAssertThrowsError(try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: 0,
                                                  initialPictureID: 0, maxPacketSize: size))
        }
        assertThrowsRTPError(try payloader.packetize(frame: [], rtpTimestamp: 0))
        // Exact multiples and one byte over.
        var standard = try VP8Payloader(ssrc: 1, payloadType: 96, initialSequenceNumber: 0, initialPictureID: 0)
        XCTAssertEqual(try standard.packetize(frame: Array(repeating: 0, count: 1184), rtpTimestamp: 0).count, 1)
        XCTAssertEqual(try standard.packetize(frame: Array(repeating: 0, count: 1185), rtpTimestamp: 0).count, 2)
        XCTAssertEqual(try standard.packetize(frame: Array(repeating: 0, count: 1184 * 200), rtpTimestamp: 0).count, 200)
    }

    func testPayloaderOutputIsReproducibleFromASeed() throws {
        func run() throws -> [[UInt8]] {
            var generator = SplitMix64(seed: 99)
            var payloader = try VP8Payloader(ssrc: 5, payloadType: 96, using: &generator)
            return try (0..<5).flatMap { index in
                try payloader.packetize(frame: randomBytes(2000 + index, using: &generator), rtpTimestamp: UInt32(index * 3000))
            }
        }
        XCTAssertEqual(try run(), try run())
    }

    func testScratchBufferPathMatchesTheArrayPath() throws {
        var a = try VP8Payloader(ssrc: 9, payloadType: 96, initialSequenceNumber: 10, initialPictureID: 20)
        var b = a
        var generator = SplitMix64(seed: 3)
        let frame = randomBytes(5000, using: &generator)
        let arrays = try a.packetize(frame: frame, rtpTimestamp: 1)
        var lent: [[UInt8]] = []
        let count = try b.packetize(frame: frame[...], rtpTimestamp: 1) { packet in lent.append(Array(packet)) }
        XCTAssertEqual(count, arrays.count)
        XCTAssertEqual(lent, arrays)
        XCTAssertEqual(a.nextSequenceNumber, b.nextSequenceNumber)
    }

    /// Header + payload packets serialize to the very bytes of the serialized path, frame after frame
    /// (sequence numbers and PictureIDs advance the same way), and each payload is the descriptor + piece.
    func testHeaderAndPayloadPathMatchesTheSerializedPath() throws {
        var serialized = try VP8Payloader(ssrc: 9, payloadType: 96, initialSequenceNumber: 65_534, initialPictureID: 0x7FFF)
        var structured = serialized
        var generator = SplitMix64(seed: 4)
        for size in [1, 1184, 1185, 7000] {
            let frame = randomBytes(size, using: &generator)
            let bytes = try serialized.packetize(frame: frame, rtpTimestamp: UInt32(size))
            let packets = try structured.packets(frame: frame[...], rtpTimestamp: UInt32(size))
            XCTAssertEqual(try packets.map { try $0.serialized() }, bytes, "\(size) bytes")
            XCTAssertEqual(packets.map(\.serializedSize), bytes.map(\.count))
            XCTAssertEqual(packets.flatMap { $0.payload.dropFirst(4) }, frame)
            XCTAssertEqual(structured.nextSequenceNumber, serialized.nextSequenceNumber)
            XCTAssertEqual(structured.nextPictureID, serialized.nextPictureID)
        }
        assertThrowsRTPError(try structured.packets(frame: [][...], rtpTimestamp: 0))
    }
}
