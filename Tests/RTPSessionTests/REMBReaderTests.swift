import RTP
import RTPSession
import XCTest

/// ``REMBReader``: the receiver's estimate (draft-alvestrand-rmcat-remb-03), through real REMB bytes.
final class REMBReaderTests: XCTestCase {
    /// Serializes and parses back, as the chain gets it (the bitrate survives the 6-bit exponent + 18-bit
    /// mantissa encoding exactly for these values).
    func remb(_ bitrate: UInt64, ssrcs: [UInt32]) throws -> RTCPPacket {
        try XCTUnwrap(RTCPPacket.parseCompound(Session.compound([.estimatedBitrate(.init(senderSSRC: 7, bitrate: bitrate, ssrcs: ssrcs))])).first)
    }

    func testEstimateForOurStreamOrAll() throws {
        var reader = REMBReader(ssrc: Session.ssrc)
        XCTAssertEqual(Session.feed(&reader, try remb(1_500_000, ssrcs: [Session.ssrc])).outcome.estimatedBitrate, 1_500_000)
        XCTAssertEqual(Session.feed(&reader, try remb(262_143, ssrcs: [])).outcome.estimatedBitrate, 262_143, "no SSRC: all streams")
        XCTAssertEqual(Session.feed(&reader, try remb(3_000_000, ssrcs: [9, Session.ssrc])).outcome.estimatedBitrate, 3_000_000)
        XCTAssertEqual(reader.statistics.rembsReceived, 3)
        XCTAssertEqual(reader.statistics.estimatedBitrate, 3_000_000)
    }

    func testEstimateForOthersIsIgnored() throws {
        var reader = REMBReader(ssrc: Session.ssrc)
        let context = Session.feed(&reader, try remb(1_500_000, ssrcs: [42]))
        XCTAssertNil(context.outcome.estimatedBitrate)
        XCTAssertEqual(context.ignored, 1)
        XCTAssertEqual(Session.feed(&reader, .goodbye(.init(ssrcs: [7]))).ignored, 0)
        XCTAssertEqual(reader.statistics, REMBReader.Statistics())
    }
}
