import CongestionControl
import RTP
import RTPSession
import XCTest

/// The chain writes the playout delay (MIN = MAX = 0) on every media packet when negotiated, before the
/// TWCC number (so congestion control counts the final size), and not on retransmissions.
final class PlayoutDelayChainTests: XCTestCase {
    static let playoutID: UInt8 = 5, twccID: UInt8 = 4

    func chain(playout: UInt8?, twcc: Bool) throws -> RTPSenderChain {
        // Without the start probe: its 400-ms cluster would pace the keyframe's packets at its own rate, and
        // this test reads the header extensions of packets released at once.
        var controller = SendSideCongestionController.Configuration.screenSender
        controller.probing.firstScale = 1
        var configuration = RTPSenderChain.Configuration(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            initialSequenceNumber: 10, duplicateRetransmissionsAboveLoss: nil,
            transportWideCC: twcc ? .init(extensionID: Self.twccID, initialSequenceNumber: 0x0100, controller: controller) : nil)
        configuration.playoutDelayExtensionID = playout
        return try RTPSenderChain(configuration: configuration)
    }

    func sent(_ chain: inout RTPSenderChain) throws -> [RTPSenderChain.OutgoingPacket] {
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(OutgoingVideoFrame(bytes: Session.frame(3000), isKeyframe: true, captureMicros: 0), nowMicros: 1_000)
        var out = chain.release(nowMicros: 1_000)
        _ = chain.receiveRTCP(try Session.compound([Session.nack([11])]), nowMicros: 2_000, arrival: Session.anyArrival)
        out += chain.release(nowMicros: 2_000)
        XCTAssertEqual(out.map(\.kind), [.media, .media, .media, .retransmission])
        return out
    }

    func testEveryMediaPacketCarriesIt() throws {
        var both = try chain(playout: Self.playoutID, twcc: true)
        let out = try sent(&both)
        for (index, packet) in out.enumerated() {
            // Right after the 12-byte fixed header: the one-byte block, exactly.
            let number = UInt16(0x0100 + index)
            let expected: [UInt8] = packet.kind == .media
                ? [0xBE, 0xDE, 0x00, 0x02, 0x52, 0x00, 0x00, 0x00, 0x41, UInt8(number >> 8), UInt8(number & 0xFF), 0x00]
                : [0xBE, 0xDE, 0x00, 0x01, 0x41, UInt8(number >> 8), UInt8(number & 0xFF), 0x00]
            XCTAssertEqual(packet.bytes[0] & 0x10, 0x10, "X bit")
            XCTAssertEqual(Array(packet.bytes[12..<(12 + expected.count)]), expected, "packet \(index)")
        }
        XCTAssertEqual(both.statistics.packetsWithoutPlayoutDelay, 0)
        XCTAssertEqual(both.report.congestion?.bytesInFlight, out.reduce(0) { $0 + $1.bytes.count }, "TWCC counts the final sizes")

        var alone = try chain(playout: Self.playoutID, twcc: false)
        for packet in try sent(&alone) {
            let parsed = try RTPPacket(parsing: packet.bytes)
            if packet.kind == .media {
                XCTAssertEqual(Array(try XCTUnwrap(parsed.headerExtension).data), [0x52, 0, 0, 0])
            } else {
                XCTAssertNil(parsed.headerExtension)
            }
        }

        var neither = try chain(playout: nil, twcc: false)
        XCTAssertTrue(try sent(&neither).allSatisfy { $0.bytes[0] & 0x10 == 0 }, "no extension when not negotiated")
    }

    func testConfigurationRefusals() {
        for id: UInt8 in [0, 15] {
            XCTAssertThrowsError(try chain(playout: id, twcc: false)) { error in
                XCTAssertEqual(error as? RTPSessionError, .invalidConfiguration("playout-delay extension ID \(id) is not within 1…14"))
            }
        }
        XCTAssertNoThrow(try chain(playout: 14, twcc: true))
    }
}
