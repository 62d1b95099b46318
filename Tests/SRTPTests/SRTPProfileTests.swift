import RTP
import SRTP
import TestSupport
import XCTest

/// The two profiles' numbers (RFC 5764 §4.1.2, RFC 7714 §14.2), what protection adds to each packet, the
/// replay window's edges, and one receiver for several SSRCs.
final class SRTPProfileTests: XCTestCase {
    func testProfileNumbers() {
        XCTAssertEqual(SRTPProtectionProfile.allCases, [.aeadAES128GCM, .aes128CMHMACSHA1_80], "most preferred first")
        XCTAssertEqual(SRTPProtectionProfile.allCases.map(\.rawValue), [0x0007, 0x0001])
        XCTAssertEqual(SRTPProtectionProfile.allCases.map(\.description), ["SRTP_AEAD_AES_128_GCM", "SRTP_AES128_CM_SHA1_80"])
        XCTAssertEqual(SRTPProtectionProfile.allCases.map(\.masterKeyLength), [16, 16])
        XCTAssertEqual(SRTPProtectionProfile.allCases.map(\.masterSaltLength), [12, 14])
        XCTAssertEqual(SRTPProtectionProfile.allCases.map(\.rtpOverhead), [16, 10])
        XCTAssertEqual(SRTPProtectionProfile.allCases.map(\.rtcpOverhead), [20, 14])
        XCTAssertEqual(SRTPProtectionProfile.allCases.map { SRTPKeyingMaterial.exportLength($0) }, [56, 60])
    }

    /// Protection adds exactly the profile's overhead, whatever the size; unprotection gives the plain bytes.
    func testProtectionAddsExactlyTheOverhead() throws {
        for profile in SRTPProtectionProfile.allCases {
            let key = SRTPSessionTests.key(profile, seed: 40)
            let sender = try SRTPSender(key: key), receiver = try SRTPReceiver(key: key)
            for (index, size) in [0, 1, 15, 16, 17, 100, 1188].enumerated() {
                let plain = try TestPackets.rtp(sequence: UInt16(index + 1), payloadSize: size)
                var packet = plain
                try sender.protectRTP(&packet)
                XCTAssertEqual(packet.count, plain.count + profile.rtpOverhead, "\(profile) \(size)")
                XCTAssertEqual(Array(packet.prefix(12)), Array(plain.prefix(12)), "the header stays in the clear")
                try receiver.unprotectRTP(&packet)
                XCTAssertEqual(packet, plain)
            }
            var rtcp = try SRTPSessionTests.rtcp()
            let plain = rtcp
            try sender.protectRTCP(&rtcp)
            XCTAssertEqual(rtcp.count, plain.count + profile.rtcpOverhead, "\(profile)")
            XCTAssertEqual(Array(rtcp.prefix(8)), Array(plain.prefix(8)), "RTCP header and sender SSRC stay in the clear")
        }
    }

    /// A 64-packet window (the smallest allowed) takes a late packet 63 behind the newest and refuses one 64
    /// behind; the limits of the setting are checked.
    func testReplayWindowEdges() throws {
        let key = SRTPSessionTests.key(.aeadAES128GCM, seed: 41)
        let sender = try SRTPSender(key: key)
        let receiver = try SRTPReceiver(key: key, replayWindow: 64)
        var protected: [UInt16: [UInt8]] = [:]
        for sequence in UInt16(1)...200 {
            var packet = try TestPackets.rtp(sequence: sequence, payloadSize: 20)
            try sender.protectRTP(&packet)
            protected[sequence] = packet
        }
        var newest = try XCTUnwrap(protected[200])
        try receiver.unprotectRTP(&newest)
        var late = try XCTUnwrap(protected[137])  // 63 behind
        XCTAssertNoThrow(try receiver.unprotectRTP(&late))
        var tooLate = try XCTUnwrap(protected[136])  // 64 behind
        XCTAssertThrowsError(try receiver.unprotectRTP(&tooLate)) { error in XCTAssertEqual(error as? SRTPError, .replayed) }
        for window in [63, 32768, 0, -1] {
            XCTAssertThrowsError(try SRTPReceiver(key: key, replayWindow: window)) { error in
                XCTAssertEqual(error as? SRTPError, .invalidConfiguration("SRTP replay window must be 64–32767 packets"))
            }
        }
        XCTAssertNoThrow(try SRTPReceiver(key: key, replayWindow: 32767))
    }

    /// One receiver takes every SSRC the peer sends (the media stream and its RTX stream), each with its
    /// own replay window.
    func testOneReceiverForSeveralStreams() throws {
        let key = SRTPSessionTests.key(.aes128CMHMACSHA1_80, seed: 42)
        let sender = try SRTPSender(key: key), receiver = try SRTPReceiver(key: key)
        for ssrc: UInt32 in [0x1111_1111, 0x2222_2222] {
            for sequence: UInt16 in [5, 6] {
                var packet = try TestPackets.rtp(sequence: sequence, ssrc: ssrc, payloadSize: 50)
                let plain = packet
                try sender.protectRTP(&packet)
                try receiver.unprotectRTP(&packet)
                XCTAssertEqual(packet, plain, "SSRC \(ssrc) sequence \(sequence)")
            }
        }
    }

    /// Key errors name what is wrong, and nothing prints key bytes.
    func testKeyErrorsAndDescriptions() {
        let short = SRTPMasterKey(profile: .aeadAES128GCM, key: Array(repeating: 7, count: 15), salt: Array(repeating: 9, count: 14))
        XCTAssertThrowsError(try SRTPSender(key: short)) { error in
            XCTAssertEqual(error as? SRTPError, .invalidKey("SRTP_AEAD_AES_128_GCM needs a 16-byte key and 12-byte salt, got 15 and 14"))
        }
        XCTAssertEqual(short.description, "SRTPMasterKey(SRTP_AEAD_AES_128_GCM, 15+14 bytes)")
        XCTAssertThrowsError(try SRTPKeyingMaterial(profile: .aeadAES128GCM, exported: Array(repeating: 1, count: 60))) { error in
            XCTAssertEqual(error as? SRTPError, .invalidKey("SRTP_AEAD_AES_128_GCM exports 56 bytes, got 60"))
        }
        let errors: [SRTPError] = [.authenticationFailed, .replayed, .malformedPacket, .bufferTooSmall(needed: 30, capacity: 20),
                                   .invalidKey("k"), .invalidConfiguration("c"), .library(code: 2, name: "bad_param")]
        XCTAssertEqual(errors.map(\.isPeerError), [true, true, true, false, false, false, false])
        XCTAssertEqual(errors.map(\.description), [
            "SRTP authentication failed", "SRTP packet replayed or too old", "SRTP packet malformed",
            "SRTP buffer of 20 bytes lacks room (30 needed)", "SRTP key invalid: k", "invalid SRTP configuration: c",
            "libsrtp error 2 (bad_param)",
        ])
    }
}
