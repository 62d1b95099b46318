import RTP
import RTPSession
import XCTest

/// The Opus RTP stream (RFC 7587): timestamps on the 48 kHz sample clock, the marker after DTX, Sender Reports
/// that put audio and video on one NTP clock (RFC 3550 §6.4.1), transport-wide numbers shared with the video.
final class OutgoingAudioStreamTests: XCTestCase {
    private func frame(_ index: Int, silent: Bool = false) -> OutgoingAudioFrame {
        OutgoingAudioFrame(
            bytes: silent ? [0xF8] : [0xFC, UInt8(index), 1, 2, 3], sampleTime: UInt64(index * 960),
            captureMicros: 5_000_000 + UInt64(index) * 20_000, isSilence: silent)
    }

    func testPacketsTimestampsMarkerAndDTX() throws {
        var stream = try OutgoingAudioStream(ssrc: 0xA0D1, payloadType: 111, timestampOffset: 0xFFFF_FF00, initialSequenceNumber: 0xFFFF, cname: "c")
        let first = try XCTUnwrap(stream.packetize(frame(0)))
        let second = try XCTUnwrap(stream.packetize(frame(1)))
        XCTAssertEqual([first.timestamp, second.timestamp], [0xFFFF_FF00, 0xFFFF_FF00 &+ 960], "offset + sample time, wrapping")
        XCTAssertEqual([first.sequenceNumber, second.sequenceNumber], [0xFFFF, 0])
        XCTAssertEqual([first.marker, second.marker], [true, false], "the first packet starts a talkspurt")
        XCTAssertEqual(first.payloadType, 111)
        XCTAssertEqual(first.ssrc, 0xA0D1)
        XCTAssertEqual(Array(first.payload), [0xFC, 0, 1, 2, 3], "the Opus packet is the payload as it is (RFC 7587 §4.2)")
        XCTAssertNil(stream.packetize(frame(2, silent: true)), "DTX packets are not sent")
        let after = try XCTUnwrap(stream.packetize(frame(3)))
        XCTAssertTrue(after.marker, "the first packet after silence has the marker (RFC 3551 §4.1)")
        XCTAssertEqual(after.sequenceNumber, 1, "no gap in sequence numbers for what was not sent")
        XCTAssertEqual(stream.statistics.packetsSent, 3)
        XCTAssertEqual(stream.statistics.silentPacketsSkipped, 1)
        XCTAssertEqual(stream.statistics.payloadBytesSent, 15)
        XCTAssertThrowsError(try OutgoingAudioStream(ssrc: 1, payloadType: 128, timestampOffset: 0, initialSequenceNumber: 0, cname: "c"))
        XCTAssertThrowsError(try OutgoingAudioStream(
            ssrc: 1, payloadType: 111, timestampOffset: 0, initialSequenceNumber: 0, cname: "c", reportIntervalMicros: 0))
    }

    /// The audio and video Sender Reports of one instant map one capture time to the same NTP time: what a
    /// receiver needs to play a sound and a picture captured together at the same time.
    func testSenderReportsPutAudioAndVideoOnOneNTPClock() throws {
        var audio = try OutgoingAudioStream(ssrc: 7, payloadType: 111, timestampOffset: 123_456, initialSequenceNumber: 0, cname: "c")
        let video = try OutgoingVideoStream(ssrc: 8, payloadType: 96, timestampOffset: 987_654, initialSequenceNumber: 0, initialPictureID: 0)
        audio.start(nowMicros: 5_000_000)
        XCTAssertNil(audio.senderReportIfDue(nowMicros: 5_500_000, ntp: NTPTimestamp(rawValue: 0)), "not due yet")
        for i in 0..<10 { _ = audio.packetize(frame(i)) }
        let now: UInt64 = 6_000_000
        let ntp = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
        let compound = try XCTUnwrap(audio.senderReportIfDue(nowMicros: now, ntp: ntp))
        let packets = try RTCPPacket.parseCompound(compound)
        guard case .senderReport(let report) = packets.first else { return XCTFail("an SR first: \(packets)") }
        XCTAssertEqual(report.ssrc, 7)
        XCTAssertEqual(report.packetCount, 10)
        XCTAssertEqual(report.octetCount, 50)
        XCTAssertEqual(report.ntpTimestamp, ntp)
        // Newest packet: sample 8640 captured at 5.18 s; now is 0.82 s later = 39 360 ticks.
        XCTAssertEqual(report.rtpTimestamp, 123_456 + 8640 + 39_360)
        guard case .sourceDescription = packets.last else { return XCTFail("SDES CNAME last") }
        // A capture instant c: the NTP time each stream's SR implies for it must agree (within a tick).
        let videoNow = video.rtpTimestamp(captureMicros: now)
        for c in [UInt64(5_000_000), 5_180_000, 5_733_333] {
            let audioSeconds = -Double(Int32(bitPattern: report.rtpTimestamp &- audio.rtpTimestamp(forMicros: c)!)) / 48_000
            let videoSeconds = -Double(Int32(bitPattern: videoNow &- video.rtpTimestamp(captureMicros: c))) / 90_000
            XCTAssertEqual(audioSeconds, videoSeconds, accuracy: 1.0 / 48_000, "capture \(c) µs")
            XCTAssertEqual(audioSeconds, -Double(now - c) / 1e6, accuracy: 1.0 / 48_000)
        }
        XCTAssertEqual(audio.nextDeadlineMicros, now + 1_000_000)
        // The viewer's report about the audio SSRC: loss and jitter in /stats.
        audio.receive([.receiverReport(RTCPReceiverReport(ssrc: 99, reports: [
            RTCPReportBlock(ssrc: 7, fractionLost: 64, cumulativeLost: 3, extendedHighestSequenceNumber: 10, jitter: 480, lastSenderReport: 0, delaySinceLastSenderReport: 0),
        ]))])
        XCTAssertEqual(audio.statistics.fractionLost, 0.25)
        XCTAssertEqual(audio.statistics.cumulativeLost, 3)
        XCTAssertEqual(audio.statistics.jitterMillis, 10)
    }

    /// Audio takes the next transport-wide sequence number after the video's packets (one sequence per bundle).
    func testAudioSharesTheTransportWideSequence() throws {
        var chain = try RTPSenderChain(configuration: RTPSenderChain.Configuration(
            ssrc: 1, payloadType: 96, cname: "c", transportWideCC: .init(extensionID: 4, initialSequenceNumber: 500)))
        var audio = try OutgoingAudioStream(ssrc: 2, payloadType: 111, timestampOffset: 0, initialSequenceNumber: 0, cname: "c")
        _ = chain.start(nowMicros: 1_000, sendsMedia: true)
        let first = try XCTUnwrap(chain.emitAudio(XCTUnwrap(audio.packetize(frame(0))), nowMicros: 1_000, reserving: 10))
        let second = try XCTUnwrap(chain.emitAudio(XCTUnwrap(audio.packetize(frame(1))), nowMicros: 21_000))
        let numbers = try [first, second].map { try TransportWideSequenceNumber.read(from: RTPPacket(parsing: $0), id: 4) }
        XCTAssertEqual(numbers, [500, 501])
        XCTAssertGreaterThanOrEqual(first.capacity, first.count + 10, "room for the SRTP trailer")
        XCTAssertEqual(chain.congestion?.statistics.packetsNumbered, 2)
    }
}
