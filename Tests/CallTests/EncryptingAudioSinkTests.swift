import AudioSource
@testable import Call
import FrameCrypto
import ScreencastSupport
import Synchronization
import XCTest

/// The sound's encryption (``EncryptingAudioSink``): each Opus packet once, its TOC byte clear, under the
/// video's key index, switching to a rotated key only when the video has (both tracks change key together).
final class EncryptingAudioSinkTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)

    private final class Collector: EncodedAudioSink {
        let frames = Mutex<[EncodedAudioFrame]>([])
        let finished = Mutex(false)
        func consume(_ frame: EncodedAudioFrame) { frames.withLock { $0.append(frame) } }
        func finish() { finished.withLock { $0 = true } }
    }

    private func packet(_ n: Int) -> EncodedAudioFrame {
        EncodedAudioFrame(
            codec: .opus, data: [0xFC] + (0..<79).map { UInt8(($0 + n) & 0xFF) }, sampleTime: UInt64(n) * 960,
            durationSamples: 960, captureMicros: 1_000 + UInt64(n) * 20_000, isSilence: n == 2)
    }

    func testPacketsAreEncryptedUnderTheVideosKeyAndSwitchWithIt() throws {
        let first = try FrameKey.derive(passphrase: "first", salt: "LKFrameEncryptionKey", iterations: 1_000)
        let second = try FrameKey.derive(passphrase: "second", salt: "LKFrameEncryptionKey", iterations: 1_000)
        let leader = Mutex<Int?>(3)
        let collector = Collector()
        let sink = try EncryptingAudioSink(
            key: first, keyIndex: 3, sink: collector, leaderKeyIndex: { leader.withLock { $0 } }, logger: logger)
        let decryptor = FrameDecryptor()
        try decryptor.setKey(first, at: 3)
        try decryptor.setKey(second, at: 4)

        sink.consume(packet(0))
        try sink.rotate(to: second, keyIndex: 4)
        sink.consume(packet(1))  // the video has not switched yet: still key 3
        XCTAssertEqual(sink.stats.pendingKeyIndex, 4)
        leader.withLock { $0 = 4 }
        sink.consume(packet(2))
        sink.finish()

        let sent = collector.frames.withLock { $0 }
        XCTAssertEqual(sent.map { Int($0.data.last!) }, [3, 3, 4], "key indices follow the video's")
        for (n, frame) in sent.enumerated() {
            let plain = packet(n)
            XCTAssertEqual(frame.data.count, plain.data.count + FrameCryptorFormat.overhead)
            XCTAssertEqual(frame.data[0], 0xFC, "the TOC byte is clear")
            XCTAssertEqual(try decryptor.decrypt(frame.data, media: .opus), plain.data)
            XCTAssertEqual(
                [frame.sampleTime, UInt64(frame.durationSamples), frame.captureMicros],
                [plain.sampleTime, UInt64(plain.durationSamples), plain.captureMicros])
            XCTAssertEqual(frame.isSilence, plain.isSilence)
        }
        XCTAssertEqual(sink.stats, .init(keyIndex: 4, pendingKeyIndex: nil, framesEncrypted: 3, framesDropped: 0))
        XCTAssertTrue(collector.finished.withLock { $0 })
    }

    /// A packet that cannot be encrypted (empty) is dropped and counted, never passed on in the clear.
    func testAnEmptyPacketIsDroppedNotSentClear() throws {
        let key = try FrameKey(raw: Array(0..<16))
        let collector = Collector()
        let sink = try EncryptingAudioSink(key: key, keyIndex: 0, sink: collector, leaderKeyIndex: { 0 }, logger: logger)
        sink.consume(EncodedAudioFrame(codec: .opus, data: [], sampleTime: 0, durationSamples: 960, captureMicros: 0))
        XCTAssertTrue(collector.frames.withLock { $0 }.isEmpty)
        XCTAssertEqual(sink.stats.framesDropped, 1)
    }
}
