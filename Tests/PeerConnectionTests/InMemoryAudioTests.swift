import PeerConnection
import RTP
import RTPSession
import XCTest

/// The Opus stream beside the video through the real state machine and SRTP, in memory: the viewer's audio
/// section answered in the BUNDLE, packets on the audio SSRC with RFC 7587 timestamps and transport-wide
/// numbers in one sequence with the video's, and Sender Reports for both SSRCs at the same instant that map
/// one capture time to the same NTP time (RFC 3550 §6.4.1: what lets a browser lip-sync them).
final class InMemoryAudioTests: XCTestCase {
    func testAudioBesideVideoWithSenderReportsOnOneClock() throws {
        let call = try InMemoryCall(transportWideCC: 5, audio: true)
        let audio = try XCTUnwrap(call.negotiated.audio, "the audio section was not accepted")
        XCTAssertEqual(audio.payloadType, TestViewer.opusPayloadType)
        XCTAssertTrue(audio.transportWideCC)
        try call.run(until: 2_000_000)
        XCTAssertNotEqual(call.viewer.audioSSRC, 0, "the answer names an audio SSRC")
        XCTAssertNotEqual(call.viewer.audioSSRC, call.viewer.mediaSSRC)
        // 3 s of 20-ms packets, each captured "now" (the video's frames are too), sample clock from 0.
        var sample: UInt64 = 0
        var next = call.now
        let end = call.now + 3_000_000
        while next < end {
            try call.run(until: next)
            call.carry(call.machine.sendAudio(
                OutgoingAudioFrame(bytes: [0xFC, UInt8(truncatingIfNeeded: sample / 960), 1, 2, 3, 4], sampleTime: sample, captureMicros: call.now),
                nowMicros: call.now))
            sample += 960
            next += 20_000
        }
        try call.run(until: end + 100_000)
        let packets = call.viewer.audioPackets
        XCTAssertEqual(packets.count, 150, "every packet arrived, decrypted")
        XCTAssertTrue(packets.allSatisfy { $0.packet.payloadType == TestViewer.opusPayloadType && $0.packet.payload.count == 6 })
        let stamps = packets.map(\.packet.timestamp)
        XCTAssertTrue(zip(stamps, stamps.dropFirst()).allSatisfy { $1 &- $0 == 960 }, "48 kHz timestamps, 960 a packet")
        XCTAssertEqual(packets.filter(\.packet.marker).count, 1, "the marker on the first packet only")
        XCTAssertTrue(packets.allSatisfy { $0.twcc != nil }, "transport-wide numbers on audio too")
        XCTAssertGreaterThan(call.viewer.numberedPackets, packets.count, "video numbered in the same sequence")

        // The last Sender Reports of each SSRC made at the same instant: one capture time, one NTP time.
        let reports = call.viewer.senderReports
        let audioSR = try XCTUnwrap(reports.last { $0.report.ssrc == call.viewer.audioSSRC }?.report)
        let videoSR = try XCTUnwrap(reports.last { $0.report.ssrc == call.viewer.mediaSSRC && $0.report.ntpTimestamp == audioSR.ntpTimestamp }?.report,
                                    "a video SR with the audio SR's NTP time")
        XCTAssertGreaterThanOrEqual(reports.filter { $0.report.ssrc == call.viewer.audioSSRC }.count, 2)
        XCTAssertEqual(audioSR.packetCount, 150)
        let first = packets[0].packet.timestamp  // sample 0, captured at `captured`
        let captured = end - 3_000_000
        let videoAtCapture = call.senderConfiguration.timestampOffset &+ UInt32(truncatingIfNeeded: captured * 90 / 1000)
        let audioSeconds = Double(Int32(bitPattern: first &- audioSR.rtpTimestamp)) / 48_000
        let videoSeconds = Double(Int32(bitPattern: videoAtCapture &- videoSR.rtpTimestamp)) / 90_000
        XCTAssertEqual(audioSeconds, videoSeconds, accuracy: 0.001, "the audio and video SRs put capture \(captured) µs at one NTP time")
        XCTAssertEqual(call.machine.audioStatistics?.packetsSent, 150)
    }
}
