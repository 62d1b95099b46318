import RTP
import RTPSession
import XCTest

/// ``OutgoingVideoStream``: frames into header + payload RTP packets (RFC 7741), with injected starting points.
final class OutgoingVideoStreamTests: XCTestCase {
    func stream(offset: UInt32 = 0xFFFF_FF00, sequence: UInt16 = 65_530, pictureID: UInt16 = 0x7FFE, maxPacketSize: Int = 1200) throws
        -> OutgoingVideoStream
    {
        try OutgoingVideoStream(
            ssrc: Session.ssrc, payloadType: 96, timestampOffset: offset, initialSequenceNumber: sequence, initialPictureID: pictureID,
            maxPacketSize: maxPacketSize)
    }

    /// Packets ≤ 1200 bytes, the marker on each frame's last, sequence numbers continuous across frames and
    /// the 16-bit wrap, timestamps from capture time (offset + µs × 90 / 1000, wrapping), and the frames come
    /// back whole through the depayloader from the serialized bytes.
    func testPacketizationIsContinuousAndTimestampedFromCaptureTime() throws {
        var stream = try stream()
        var depayloader = VP8Depayloader()
        var expectedSequence: UInt16 = 65_530
        let frames = [Session.frame(30_000, seed: 1), Session.frame(900, seed: 2), Session.frame(2400, seed: 3)]
        let captures: [UInt64] = [1_000_000, 1_033_333, 1_066_667]
        var received: [VP8Depayloader.Frame] = []
        for (index, bytes) in frames.enumerated() {
            let frame = try stream.packetize(
                OutgoingVideoFrame(bytes: bytes, isKeyframe: index == 0, captureMicros: captures[index]), nowMicros: 5_000_000)
            XCTAssertEqual(frame.captureMicros, captures[index])
            XCTAssertEqual(frame.nowMicros, 5_000_000)
            XCTAssertEqual(frame.isKeyframe, index == 0)
            for (position, packet) in frame.packets.enumerated() {
                let raw = try packet.serialized()
                XCTAssertLessThanOrEqual(raw.count, 1200)
                XCTAssertEqual(raw.count, packet.serializedSize)
                XCTAssertEqual(packet.sequenceNumber, expectedSequence)
                expectedSequence &+= 1
                XCTAssertEqual(packet.ssrc, Session.ssrc)
                XCTAssertEqual(packet.payloadType, 96)
                XCTAssertEqual(packet.marker, position == frame.packets.count - 1)
                XCTAssertEqual(packet.timestamp, 0xFFFF_FF00 &+ UInt32(captures[index] * 9 / 100))
                XCTAssertEqual(stream.rtpTimestamp(captureMicros: captures[index]), packet.timestamp)
                received += try depayloader.insert(RTPPacket(parsing: raw), arrivalMilliseconds: 5000)
            }
        }
        XCTAssertEqual(received.map(\.data), frames)
        XCTAssertEqual(received.map(\.pictureID), [0x7FFE, 0x7FFF, 0])
        XCTAssertEqual(stream.statistics.framesSent, 3)
        XCTAssertEqual(stream.statistics.keyframesSent, 1)
        XCTAssertEqual(stream.statistics.packetsSent, 26 + 1 + 3)
        XCTAssertEqual(stream.nextSequenceNumber, expectedSequence)
    }

    /// The counts a Sender Report carries: payload bytes (RFC 3550 §6.4.1: without headers) and whole packets.
    func testCountsPayloadAndPacketBytes() throws {
        var stream = try stream()
        XCTAssertFalse(stream.statistics.hasSentMedia)
        let frame = try stream.packetize(OutgoingVideoFrame(bytes: Session.frame(5000), isKeyframe: true, captureMicros: 0), nowMicros: 0)
        XCTAssertEqual(frame.packets.count, 5)
        XCTAssertEqual(stream.statistics.payloadBytesSent, 5000 + 5 * 4, "VP8 data and the 4-byte descriptors")
        XCTAssertEqual(stream.statistics.rtpBytesSent, 5000 + 5 * 16)
        XCTAssertTrue(stream.statistics.hasSentMedia)
    }

    /// The same starting points and inputs give the same bytes (everything random is injected).
    func testSameInputsGiveSameBytes() throws {
        var a = try stream(), b = try stream()
        for index in 0..<5 {
            let frame = OutgoingVideoFrame(bytes: Session.frame(1500 * (index + 1), seed: UInt8(index)), isKeyframe: index == 0,
                                           captureMicros: UInt64(index) * 33_333)
            let first = try a.packetize(frame, nowMicros: 0).packets.map { try $0.serialized() }
            XCTAssertEqual(first, try b.packetize(frame, nowMicros: 0).packets.map { try $0.serialized() })
        }
    }

    /// A frame that cannot be sent is refused with a typed error and counts nothing; a configuration that
    /// leaves no room for VP8 data, or a payload type above 127, is refused at once.
    func testUnsendableFramesAndConfigurations() throws {
        var stream = try stream()
        XCTAssertThrowsError(try stream.packetize(OutgoingVideoFrame(bytes: [], isKeyframe: true, captureMicros: 0), nowMicros: 0)) { error in
            guard case .unsendableFrame(.unsendableFrame(let bytes, _, _))? = error as? RTPSessionError else { return XCTFail("\(error)") }
            XCTAssertEqual(bytes, 0)
        }
        var tiny = try self.stream(maxPacketSize: 17)
        let huge = OutgoingVideoFrame(bytes: Session.frame(VP8Payloader.maxPacketsPerFrame + 1), isKeyframe: true, captureMicros: 0)
        XCTAssertThrowsError(try tiny.packetize(huge, nowMicros: 0))
        XCTAssertEqual(stream.statistics, OutgoingVideoStream.Statistics())
        XCTAssertEqual(tiny.statistics.framesSent, 0)
        XCTAssertThrowsError(try self.stream(maxPacketSize: 16)) { error in
            guard case .invalidConfiguration? = error as? RTPSessionError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try OutgoingVideoStream(
            ssrc: 1, payloadType: 128, timestampOffset: 0, initialSequenceNumber: 0, initialPictureID: 0))
    }
}
