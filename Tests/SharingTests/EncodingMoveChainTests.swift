import Foundation
import Media
import RTP
import RTPSession
import Sharing
import TestSupport
import VideoSource
import XCTest

/// A viewer moved between the two encodings without renegotiation, in memory with real libvpx: one sender
/// chain (one SSRC, RTX, NACK) is fed through an ``EncodingSwitch`` from a 1280×720 main encoder and a 640×360
/// second one, moved down and back up; a depayloader and one libvpx decoder read what it sends.
final class EncodingMoveChainTests: XCTestCase {
    func testSequenceNumbersPictureIDsAndTimestampsContinueAndEveryFrameDecodesAcrossBothMoves() throws {
        let pictures = try EncoderReplay.pictures(
            fromDump: TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/window-drag.frames").path,
            scaledTo: PictureSize(width: 1280, height: 720))
        let main = try VP8Encoder(settings: VP8EncoderSettings(width: 1280, height: 720, bitrateKbps: 2000))
        let low = try VP8Encoder(settings: VP8EncoderSettings(width: 640, height: 360, bitrateKbps: 400))
        let rtx = RTXStream(ssrc: 0x0BAD_CAFE, payloadType: 97)
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: 0x3A5E_91C7, payloadType: 96, rtx: rtx, cname: "mover", initialSequenceNumber: 65_500, initialPictureID: 32_760,
            historyPackets: 2048, historyBytes: 8 << 20, feedback: .all))
        var gate = EncodingSwitch()
        var depayloader = VP8Depayloader()
        let decoder = try VP8Decoder()
        var picture = I420Buffer()
        var now: UInt64 = 1_000_000
        _ = chain.start(nowMicros: now, sendsMedia: true)
        var lowKeyframeOwed = false, mainKeyframeOwed = false
        var media: [RTPPacket] = []
        var decoded: [(width: Int, keyframe: Bool, pictureID: UInt16?, timestamp: UInt32)] = []
        var nacked: [UInt16] = []
        var resent: [RTPPacket] = []

        func release() throws {
            for sent in chain.release(nowMicros: now) {
                guard sent.kind == .media else {
                    resent.append(try RTPPacket(parsing: sent.bytes))
                    continue
                }
                let packet = try RTPPacket(parsing: sent.bytes)
                media.append(packet)
                for frame in try depayloader.insert(packet, arrivalMilliseconds: now / 1000) {
                    XCTAssertTrue(try decoder.decode(frame.data, into: &picture), "frame \(decoded.count) decodes")
                    decoded.append((picture.width, frame.isKeyframe, frame.pictureID, frame.rtpTimestamp))
                }
            }
        }
        func offer(_ encoded: EncodedFrame?, from encoding: EncodingChoice) throws {
            guard let encoded else { return }
            guard case .send(let capture, _) = gate.frame(from: encoding, isKeyframe: encoded.isKeyframe, captureMicros: encoded.captureTimestampMicros)
            else { return }
            _ = try chain.send(OutgoingVideoFrame(bytes: encoded.bytes, isKeyframe: encoded.isKeyframe, captureMicros: capture), nowMicros: now)
        }

        for index in 0..<60 {
            var frame = pictures[index % pictures.count]
            frame.captureTimestampMicros = now
            if index == 15, gate.moveTo(.low, nowMicros: now) { lowKeyframeOwed = true }
            if index == 40, gate.moveTo(.main, nowMicros: now) { mainKeyframeOwed = true }
            // The main encoder's frame first, then the second one's of the same picture (it is later to finish).
            let mainFrame = try main.encode(frame, forceKeyframe: index == 0 || (mainKeyframeOwed && index == 41))
            if mainFrame?.isKeyframe == true, index > 0 { mainKeyframeOwed = false }
            try offer(mainFrame, from: .main)
            var small = I420Buffer()
            try frame.picture.scaled(to: PictureSize(width: 640, height: 360), filter: .box, into: &small)
            let lowFrame = try low.encode(VideoFrame(picture: small, captureTimestampMicros: frame.captureTimestampMicros),
                                          forceKeyframe: index == 0 || (lowKeyframeOwed && index == 16))
            if lowFrame?.isKeyframe == true, index > 0 { lowKeyframeOwed = false }
            try offer(lowFrame, from: .low)
            now += 66_667
            try release()
            // NACKs for the last packet before the move down and the low keyframe's last one: both come back.
            if index == 14 || index == 16 { nacked.append(try XCTUnwrap(media.last?.sequenceNumber)) }
            if index == 18 {
                let nack = RTCPPacket.nack(RTCPGenericNACK(senderSSRC: 7, mediaSSRC: 0x3A5E_91C7, sequenceNumbers: nacked))
                _ = chain.receiveRTCP(try RTCPPacket.serializeCompound([nack]), nowMicros: now, arrival: NTPTimestamp(unixMicroseconds: now))
            }
        }
        now += 1_000_000
        try release()

        // One stream: one SSRC, every sequence number once and in order (across the 16-bit wrap).
        XCTAssertEqual(Set(media.map(\.ssrc)), [0x3A5E_91C7])
        for (a, b) in zip(media, media.dropFirst()) { XCTAssertEqual(b.sequenceNumber, a.sequenceNumber &+ 1) }
        // Picture IDs +1 a frame, RTP timestamps rising, through both moves; the resolution changes at keyframes only.
        // One frame a picture, and one more: the main frame of the picture the low keyframe is of (make-before-break).
        XCTAssertEqual(decoded.count, 61)
        for (a, b) in zip(decoded, decoded.dropFirst()) {
            XCTAssertEqual(b.pictureID, a.pictureID.map { ($0 + 1) & 0x7FFF })
            XCTAssertGreaterThan(Int32(bitPattern: b.timestamp &- a.timestamp), 0)
            if b.width != a.width { XCTAssertTrue(b.keyframe, "a new size starts with a keyframe") }
        }
        XCTAssertEqual(decoded.map(\.width), Array(repeating: 1280, count: 17) + Array(repeating: 640, count: 25) + Array(repeating: 1280, count: 19))
        XCTAssertEqual(decoded.filter(\.keyframe).count, 3)
        XCTAssertEqual(gate.moves, 2)

        // RFC 4588 §4: the RTX payload starts with the original sequence number.
        // (Each at most twice: the responder resends once per RTT, and none is known here.)
        let original = resent.map { UInt16($0.payload.first ?? 0) << 8 | UInt16($0.payload.dropFirst().first ?? 0) }
        XCTAssertEqual(Set(original), Set(nacked))
        XCTAssertLessThanOrEqual(resent.count, 4)
        XCTAssertEqual(Set(resent.map(\.ssrc)), [0x0BAD_CAFE])
    }
}
