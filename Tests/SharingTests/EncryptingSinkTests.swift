import FrameCrypto
import Media
import RTP
import ScreencastSupport
import Sharing
import Synchronization
import VideoSource
import XCTest

/// ``EncryptingSink`` between the encoder and its consumers: one encryption shared by every sink, the VP8
/// header clear enough for RTP (RFC 7741) and keyframe detection, rotation at a keyframe, no clear frame
/// ever passed on.
final class EncryptingSinkTests: XCTestCase {
    final class Capture: VideoSink {
        let frames = Mutex<[EncodedFrame]>([])
        let finished = Atomic<Bool>(false)
        func consume(_ frame: EncodedFrame) { frames.withLock { $0.append(frame) } }
        func finish() { finished.store(true, ordering: .relaxed) }
        var all: [EncodedFrame] { frames.withLock { $0 } }
    }

    final class Encoder: SharedEncoderControl {
        let keyframeRequests = Atomic<Int>(0)
        func requestKeyframe() { keyframeRequests.add(1, ordering: .relaxed) }
        func setBitrate(kbps: Int?) {}
        func setDroppableCadence(period: Int?) {}
    }

    private let logger = Logger(component: "test", threshold: .error)
    private let key = try! FrameKey(raw: Array(100..<116))
    private let newKey = try! FrameKey(raw: Array(200..<216))

    /// A real keyframe and the delta frames after it (libvpx, 320x240, a box moving on grey).
    private func vp8Frames(count: Int, nonReference: Set<Int> = []) throws -> [EncodedFrame] {
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(width: 320, height: 240, bitrateKbps: 400))
        var frames: [EncodedFrame] = []
        for index in 0..<count {
            var picture = I420Buffer(width: 320, height: 240, colorSpace: .bt601Limited)
            picture.withUnsafeMutablePlanes { y, u, v in
                for i in 0..<y.count { y[i] = 128 }
                for i in 0..<u.count { u[i] = 128; v[i] = 128 }
                for row in 100..<140 { for col in (10 + index * 8)..<(50 + index * 8) { y[row * 320 + col] = 235 } }
            }
            let video = VideoFrame(picture: picture, captureTimestampMicros: UInt64(index) * 33_333)
            if let frame = try encoder.encode(video, updatesReferences: !nonReference.contains(index)) {
                frames.append(frame)
            }
        }
        XCTAssertTrue(frames.first?.isKeyframe == true)
        return frames
    }

    func testOneEncryptionIsSharedByEverySink() throws {
        let (first, second) = (Capture(), Capture())
        let sink = try EncryptingSink(key: key, keyIndex: 3, sinks: [first, second], encoder: Encoder(), logger: logger)
        let frames = try vp8Frames(count: 4, nonReference: [2])
        XCTAssertEqual(frames.map(\.isDroppable), [false, false, true, false])
        for frame in frames { sink.consume(frame) }
        let decryptor = FrameDecryptor()
        try decryptor.setKey(key, at: 3)
        XCTAssertEqual(first.all.count, frames.count)
        for (index, (a, b)) in zip(first.all, second.all).enumerated() {
            XCTAssertEqual(a, b, "both sinks get the same ciphertext")
            XCTAssertNotEqual(a.bytes, frames[index].bytes)
            XCTAssertEqual(a.isKeyframe, frames[index].isKeyframe)
            XCTAssertEqual(a.isDroppable, frames[index].isDroppable, "a non-reference frame stays droppable encrypted")
            XCTAssertEqual(a.rtpTimestamp, frames[index].rtpTimestamp)
            XCTAssertEqual(a.captureTimestampMicros, frames[index].captureTimestampMicros)
            XCTAssertEqual([a.width, a.height], [320, 240])
            XCTAssertEqual(a.bytes.count, frames[index].bytes.count + 30)
            XCTAssertEqual(a.bytes.last, 3, "key index")
            XCTAssertEqual(try decryptor.decrypt(a.bytes), frames[index].bytes)
        }
        XCTAssertEqual(sink.stats, EncryptingSink.Stats(keyIndex: 3, pendingKeyIndex: nil, framesEncrypted: UInt64(frames.count), framesDropped: 0, rotations: 0))
        sink.finish()
        XCTAssertTrue(first.finished.load(ordering: .relaxed) && second.finished.load(ordering: .relaxed))
    }

    /// The payloader and the receiving depayloader see only the clear header: the encrypted frame goes
    /// through RFC 7741 packets whole, its keyframe bit and size read from the clear bytes.
    func testEncryptedFramesSurviveRTPPacketizationAndKeepKeyframeDetection() throws {
        let capture = Capture()
        let sink = try EncryptingSink(key: key, keyIndex: 0, sinks: [capture], encoder: Encoder(), logger: logger)
        let frames = try vp8Frames(count: 3)
        for frame in frames { sink.consume(frame) }
        var payloader = try VP8Payloader(ssrc: 0x1234_5678, payloadType: 96, initialSequenceNumber: 65_530, initialPictureID: 7, maxPacketSize: 300)
        var depayloader = VP8Depayloader()
        var received: [VP8Depayloader.Frame] = []
        for (index, frame) in capture.all.enumerated() {
            for packet in try payloader.packetize(frame: frame.bytes, rtpTimestamp: frame.rtpTimestamp) {
                received += try depayloader.insert(try RTPPacket(parsing: packet), arrivalMilliseconds: UInt64(index))
            }
        }
        XCTAssertEqual(received.map(\.data), capture.all.map(\.bytes))
        XCTAssertEqual(received.map(\.isKeyframe), frames.map(\.isKeyframe))
        let header = try VP8FrameHeader(parsing: received[0].data[...])
        XCTAssertEqual([header.width, header.height], [320, 240], "the keyframe's clear header still names the size")
        let decryptor = FrameDecryptor()
        try decryptor.setKey(key, at: 0)
        XCTAssertEqual(try received.map { try decryptor.decrypt($0.data) }, frames.map(\.bytes))
    }

    /// A rotation asks for a keyframe and takes effect at the first keyframe: delta frames before it stay
    /// under the old key, so a viewer with only the new key starts with a decodable frame.
    func testRotationSwitchesAtTheNextKeyframe() throws {
        let capture = Capture(), encoder = Encoder()
        let sink = try EncryptingSink(key: key, keyIndex: 14, sinks: [capture], encoder: encoder, logger: logger)
        let frames = try vp8Frames(count: 3)
        sink.consume(frames[0])
        XCTAssertEqual(try sink.rotate(to: newKey), 15)
        XCTAssertEqual(encoder.keyframeRequests.load(ordering: .relaxed), 1)
        XCTAssertEqual(sink.stats.pendingKeyIndex, 15)
        sink.consume(frames[1])  // a delta frame: still the old key
        XCTAssertEqual(try sink.rotate(to: newKey), 0, "a second rotation replaces the pending one, wrapping at 16")
        sink.consume(frames[2])
        sink.consume(frames[0])  // the keyframe: the switch
        sink.consume(frames[1])
        XCTAssertEqual(capture.all.map { Int($0.bytes.last!) }, [14, 14, 14, 0, 0])
        XCTAssertEqual(sink.stats, EncryptingSink.Stats(keyIndex: 0, pendingKeyIndex: nil, framesEncrypted: 5, framesDropped: 0, rotations: 1))
        let decryptor = FrameDecryptor()
        try decryptor.setKey(newKey, at: 0)
        XCTAssertEqual(try decryptor.decrypt(capture.all[3].bytes), frames[0].bytes)
        XCTAssertThrowsError(try decryptor.decrypt(capture.all[2].bytes), "index 14 is not in this ring")
    }

    /// A frame that cannot be encrypted is dropped and counted, never passed on in the clear; the encoder is
    /// asked for a keyframe to repair the viewers' reference chain.
    func testAFrameThatCannotBeEncryptedIsDroppedNotSentClear() throws {
        let capture = Capture(), encoder = Encoder()
        let sink = try EncryptingSink(key: key, keyIndex: 0, sinks: [capture], encoder: encoder, logger: logger)
        sink.consume(EncodedFrame(bytes: [], isKeyframe: false, captureTimestampMicros: 0, width: 320, height: 240))
        sink.consume(EncodedFrame(bytes: [0x00, 0, 0, 0x9D], isKeyframe: true, captureTimestampMicros: 1, width: 320, height: 240))
        XCTAssertTrue(capture.all.isEmpty)
        XCTAssertEqual(sink.stats.framesDropped, 2)
        XCTAssertEqual(encoder.keyframeRequests.load(ordering: .relaxed), 2)
        XCTAssertThrowsError(try EncryptingSink(key: key, keyIndex: 16, sinks: [], encoder: encoder, logger: logger))
    }

    func testStatsJSONNamesTheKeyIndexNeverTheKey() throws {
        let sink = try EncryptingSink(key: key, keyIndex: 2, sinks: [], encoder: Encoder(), logger: logger)
        let text = sink.json.serialized
        XCTAssertTrue(text.contains(#""enabled":true"#), text)
        XCTAssertTrue(text.contains(#""keyIndex":2"#), text)
        XCTAssertFalse(text.contains(key.rawBytes.map { String(format: "%02x", $0) }.joined()))
        XCTAssertEqual(EncryptingSink.disabledJSON.serialized, #"{"enabled":false}"#)
    }
}
