import RTP
import TestSupport
import DTLS
import SDP
import SRTP
import XCTest

/// The keys a DTLS handshake exported drive SRTP both ways: each side protects with its own write key,
/// the other unprotects with the same key from its own export.
final class SRTPEndToEndTests: XCTestCase {
    func testDTLSExportedKeysDriveSRTPBothWays() throws {
        for profiles in [[SRTPProtectionProfile.aeadAES128GCM], [.aes128CMHMACSHA1_80]] {
            let link = try DTLSLink.pair { $0.srtpProfiles = profiles }
            XCTAssertTrue(link.run())
            let clientKeys = try XCTUnwrap(link.client.keyingMaterial)
            let serverKeys = try XCTUnwrap(link.server.keyingMaterial)
            XCTAssertEqual(clientKeys.profile, profiles[0])

            // Client → server (media), server → client (RTCP feedback), each with its own role's keys.
            let clientSender = try SRTPSender(key: clientKeys.writeKey(of: .client))
            let serverReceiver = try SRTPReceiver(key: serverKeys.writeKey(of: link.server.role.peer))
            let serverSender = try SRTPSender(key: serverKeys.writeKey(of: .server))
            let clientReceiver = try SRTPReceiver(key: clientKeys.writeKey(of: .server))
            for sequence in 1...50 as ClosedRange<UInt16> {
                let plain = try TestPackets.rtp(sequence: sequence, payloadSize: 1100)
                var packet = plain
                try clientSender.protectRTP(&packet)
                XCTAssertLessThanOrEqual(packet.count, 1200 - 12 + profiles[0].rtpOverhead)
                try serverReceiver.unprotectRTP(&packet)
                XCTAssertEqual(packet, plain)
            }
            let feedback = try RTCPPacket.serializeCompound([
                .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 0x1122_3344)),
            ])
            var control = feedback
            try serverSender.protectRTCP(&control)
            try clientReceiver.unprotectRTCP(&control)
            XCTAssertEqual(control, feedback)

            // The directions' keys differ: a packet sent with the server's key does not pass the client's check.
            var crossed = try TestPackets.rtp(sequence: 99)
            try serverSender.protectRTP(&crossed)
            XCTAssertThrowsError(try serverReceiver.unprotectRTP(&crossed)) { error in
                XCTAssertEqual(error as? SRTPError, .authenticationFailed)
            }
        }
    }
}
