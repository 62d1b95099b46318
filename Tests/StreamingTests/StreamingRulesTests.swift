import H264
@testable import Streaming
import XCTest

/// The seed's rules as sans-I/O values: the default bitrate, the keyframe cadence, the reconnect schedule and its
/// limit, the send queue's drop policy, RTMP URLs and Annex B parameter sets.
final class StreamingRulesTests: XCTestCase {
    func testDefaultBitrateIsWidthTimesHeightTimesFpsTimesEightHundredths() {
        XCTAssertEqual(H264Settings.defaultBitsPerSecond(width: 1280, height: 720, framesPerSecond: 30), 2_211_840)
        XCTAssertEqual(H264Settings.defaultBitsPerSecond(width: 1920, height: 1080, framesPerSecond: 30), 4_976_640)
        XCTAssertEqual(H264Settings.defaultBitsPerSecond(width: 160, height: 120, framesPerSecond: 5), 100_000, "floor")
        let settings = H264Settings(width: 640, height: 360, framesPerSecond: 25)
        XCTAssertEqual(settings.bitsPerSecond, 460_800)
        XCTAssertEqual(settings.keyframeIntervalFrames, 50)
        XCTAssertEqual(settings.vbvBufferBits, settings.bitsPerSecond, "a VBV of one second")
        XCTAssertEqual(H264Settings(width: 640, height: 360, framesPerSecond: 25, bitsPerSecond: 1_000_000).bitsPerSecond, 1_000_000)
    }

    func testKeyframeEveryTwiceTheFrameRateOrTwoSecondsOrOnRequest() {
        var cadence = KeyframeCadence(intervalFrames: 60)
        var keys: [Int] = []
        for n in 0..<181 where cadence.next(atMicros: UInt64(n) * 33_333) { keys.append(n) }
        XCTAssertEqual(keys, [0, 60, 120, 180])
        // A still screen at 2 fps: every 2 s of capture time.
        var slow = KeyframeCadence(intervalFrames: 60)
        keys = []
        for n in 0..<10 where slow.next(atMicros: UInt64(n) * 500_000) { keys.append(n) }
        XCTAssertEqual(keys, [0, 4, 8])
        var asked = KeyframeCadence(intervalFrames: 60)
        XCTAssertTrue(asked.next(atMicros: 0))
        XCTAssertFalse(asked.next(atMicros: 33_000))
        asked.request()
        XCTAssertTrue(asked.next(atMicros: 66_000))
        XCTAssertFalse(asked.next(atMicros: 99_000))
    }

    func testRetryScheduleAtOnceThenTwoFiveTenThenTenUpToTheLimit() {
        var schedule = RetrySchedule(limit: 5)
        var delays: [UInt64?] = (0..<6).map { _ in schedule.nextDelayMillis() }
        XCTAssertEqual(delays, [0, 2_000, 5_000, 10_000, 10_000, nil])
        schedule.succeeded()
        XCTAssertEqual(schedule.nextDelayMillis(), 0, "a publish starts the schedule over")
        XCTAssertEqual(schedule.reconnects, 6)
        var forever = RetrySchedule(limit: 0)
        delays = (0..<50).map { _ in forever.nextDelayMillis() }
        XCTAssertFalse(delays.contains(nil))
        XCTAssertEqual(delays.last, 10_000)
    }

    private typealias Queue = SendQueue<Int>
    private func item(_ n: Int, key: Bool) -> Queue.Item { .init(frame: n, isKeyframe: key, micros: UInt64(n) * 33_333) }

    func testQueueOverItsLimitDropsUpToTheNewestKeyframe() {
        var queue = Queue(limit: 30)
        for n in 0..<30 { XCTAssertEqual(queue.push(item(n, key: n % 20 == 0)), .init()) }
        XCTAssertEqual(queue.push(item(30, key: false)), .init(dropped: 20), "31 frames > 30: the 20 before keyframe 20 go")
        XCTAssertEqual(queue.count, 11)
        XCTAssertEqual(queue.items.first?.frame, 20)
        XCTAssertTrue(queue.items.first!.isKeyframe)
        XCTAssertEqual(queue.dropped, 20)
        XCTAssertEqual(queue.spanMicros, 10 * 33_333)
    }

    func testQueueWithNoLaterKeyframeDropsAllAndAwaitsOne() {
        var queue = Queue(limit: 30)
        for n in 0..<30 { _ = queue.push(item(n, key: n == 0)) }
        let outcome = queue.push(item(30, key: false))
        XCTAssertEqual(outcome, .init(dropped: 31, needsKeyframe: true))
        XCTAssertTrue(queue.isEmpty)
        XCTAssertEqual(queue.push(item(31, key: false)).dropped, 1, "non-key frames after a gap would not decode")
        XCTAssertEqual(queue.push(item(32, key: true)), .init())
        XCTAssertEqual(queue.pop()?.frame, 32)
        XCTAssertEqual(queue.dropped, 32)
    }

    private func sound(_ n: Int, at micros: UInt64) -> Queue.Item { .init(frame: 1000 + n, isKeyframe: true, micros: micros, isVideo: false) }

    func testSoundNeverGoesAheadOfThePicturesAndIsDroppedWithThem() {
        var queue = Queue(limit: 30)
        _ = queue.push(item(0, key: true))
        _ = queue.push(sound(0, at: 10_000))
        _ = queue.push(sound(1, at: 31_333))
        XCTAssertEqual(queue.pop()?.frame, 0)
        XCTAssertNil(queue.pop(), "sound at 10 ms waits: no picture at or after its time yet")
        _ = queue.push(item(1, key: false))  // 33.3 ms
        XCTAssertEqual(queue.pop()?.frame, 1000)
        XCTAssertEqual(queue.pop()?.frame, 1001)
        XCTAssertEqual(queue.pop()?.frame, 1)
        _ = queue.push(sound(2, at: 60_000))
        XCTAssertNil(queue.pop())
        XCTAssertEqual(queue.pop(draining: true)?.frame, 1002, "a file's last writes take the rest")

        // A drop of pictures up to keyframe 20 drops the sound before it too; the sound after it stays.
        var full = Queue(limit: 30)
        for n in 0..<30 {
            _ = full.push(item(n, key: n % 20 == 0))
            _ = full.push(sound(n, at: UInt64(n) * 33_333 + 5_000))
        }
        XCTAssertEqual(full.push(item(30, key: false)), .init(dropped: 20))
        XCTAssertEqual(full.droppedAudio, 20)
        XCTAssertEqual(full.audioItems.first?.frame, 1020)
        XCTAssertEqual(full.pop()?.frame, 20, "the keyframe first, then sound in time order")
        XCTAssertEqual(full.pop()?.frame, 1020)

        // After a reconnect with no keyframe waiting: all sound goes, and none goes out before the keyframe.
        var again = Queue(limit: 30)
        _ = again.push(item(0, key: false))
        _ = again.push(sound(0, at: 0))
        XCTAssertTrue(again.restartAtKeyframe())
        _ = again.push(sound(1, at: 40_000))
        _ = again.push(item(1, key: false))
        XCTAssertNil(again.pop(), "awaiting a keyframe: nothing")
        _ = again.push(sound(2, at: 70_000))
        _ = again.push(item(2, key: true))
        XCTAssertEqual(again.pop()?.frame, 2, "the keyframe (66.7 ms) first")
        XCTAssertNil(again.pop(), "sound at 70 ms waits for a picture at or after it")
        _ = again.push(item(3, key: false))
        XCTAssertEqual(again.pop()?.frame, 1002)
        XCTAssertEqual(again.droppedAudio, 2, "the sound before the restart, and the sound older than the keyframe")
    }

    func testSoundWithoutPicturesIsBounded() {
        var queue = Queue(limit: 30)
        for n in 0..<(Queue.audioLimit + 7) { _ = queue.push(sound(n, at: UInt64(n) * 21_333)) }
        XCTAssertEqual(queue.audioItems.count, Queue.audioLimit)
        XCTAssertEqual(queue.droppedAudio, 7)
        XCTAssertEqual(queue.audioItems.first?.frame, 1007)
    }

    func testQueueRestartsAtAKeyframeAfterAReconnect() {
        var queue = Queue()
        for n in 0..<5 { _ = queue.push(item(n, key: n == 3)) }
        XCTAssertFalse(queue.restartAtKeyframe())
        XCTAssertEqual(queue.pop()?.frame, 3)
        var empty = Queue()
        _ = empty.push(item(0, key: false))
        XCTAssertTrue(empty.restartAtKeyframe(), "nothing decodable waits: ask for a keyframe")
        XCTAssertEqual(empty.push(item(1, key: false)).dropped, 1)
    }

    func testBitrateStepsDownPastHalfASecondOfDelayAndUpAfterFiveQuietSeconds() {
        var adapter = QueueBitrateAdapter(now: 0)
        XCTAssertEqual(QueueBitrateAdapter.steps, [1.0, 0.75, 0.5, 0.35])
        XCTAssertNil(adapter.observe(queueDelayMicros: 500_000, dropped: 0, now: 1_000_000), "500 ms is not past 500 ms")
        XCTAssertEqual(adapter.observe(queueDelayMicros: 500_001, dropped: 0, now: 1_100_000), 0.75)
        XCTAssertNil(adapter.observe(queueDelayMicros: 900_000, dropped: 0, now: 3_000_000), "2 s between steps down")
        XCTAssertEqual(adapter.observe(queueDelayMicros: 900_000, dropped: 0, now: 3_100_000), 0.5)
        XCTAssertEqual(adapter.observe(queueDelayMicros: 0, dropped: 12, now: 5_200_000), 0.35, "a drop steps down too")
        XCTAssertNil(adapter.observe(queueDelayMicros: 900_000, dropped: 12, now: 7_300_000), "the lowest step")
        XCTAssertNil(adapter.observe(queueDelayMicros: 100_000, dropped: 12, now: 10_100_000), "5 s after the last drop")
        XCTAssertEqual(adapter.observe(queueDelayMicros: 100_000, dropped: 12, now: 10_200_000), 0.5, "5 s without drops: one up")
        XCTAssertNil(adapter.observe(queueDelayMicros: 100_000, dropped: 12, now: 15_100_000))
        XCTAssertEqual(adapter.observe(queueDelayMicros: 100_000, dropped: 12, now: 15_200_000), 0.75)
        XCTAssertEqual(adapter.observe(queueDelayMicros: 100_000, dropped: 12, now: 20_200_000), 1.0)
        XCTAssertNil(adapter.observe(queueDelayMicros: 100_000, dropped: 12, now: 40_000_000), "the top step")
    }

    func testSendBufferIsHalfASecondOfTheTargetWithinBounds() {
        XCTAssertEqual(StreamWriter.sendBufferBytes(targetBitsPerSecond: 2_211_840), 138_240, "1280x720 at 30 fps: 0.5 s")
        XCTAssertEqual(StreamWriter.sendBufferBytes(targetBitsPerSecond: 0), 65_536, "before the encoder has a target")
        XCTAssertEqual(StreamWriter.sendBufferBytes(targetBitsPerSecond: 100_000_000), 1_048_576)
        XCTAssertEqual(StreamWriter.sendBufferRange, 65_536...1_048_576)
    }

    func testRTMPURLs() throws {
        let url = try RTMPURL("rtmp://127.0.0.1:1935/live/secret-key")
        XCTAssertEqual(url.application, "live")
        XCTAssertEqual(url.key, "secret-key")
        XCTAssertEqual(url.redacted, "rtmp://127.0.0.1:1935/live/***")
        XCTAssertFalse("\(url)".contains("secret"))
        let twitch = try RTMPURL("rtmps://live.twitch.tv/app/", key: "live_123\n")
        XCTAssertEqual(twitch.url, "rtmps://live.twitch.tv/app/live_123")
        XCTAssertEqual(try RTMPURL("rtmp://a.rtmp.youtube.com/live2/k/").url, "rtmp://a.rtmp.youtube.com/live2/k")
        for bad in ["http://x/app/key", "rtmp://", "rtmp://host/key", "rtmp://host:99999/app/key", "rtmp://u:p@host/app/key", "rtmp:/host/app/key"] {
            XCTAssertThrowsError(try RTMPURL(bad), bad)
        }
        XCTAssertThrowsError(try RTMPURL("rtmp://host/app", key: " "))
    }

    func testAnnexBParameterSets() {
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 9, 9]
        XCTAssertEqual(AnnexB.units(stream).map(Array.init), [[0x67, 1, 2], [0x68, 3], [0x65, 9, 9]])
        XCTAssertEqual(AnnexB.parameterSets(stream), [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 0, 1, 0x68, 3])
        XCTAssertNil(AnnexB.parameterSets([0, 0, 1, 0x41, 5]))
    }

    /// The WebM track's CodecDelay comes from the OpusHead's pre-skip (RFC 7845 §5.1: bytes 10-11, little-endian).
    func testOpusPreSkipFromTheOpusHead() {
        let head: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0]
        XCTAssertEqual(AVMuxer.AudioTrack.opusPreSkip(head), 312)
        XCTAssertEqual(AVMuxer.AudioTrack.opusPreSkip(Array(head.prefix(11))), 0, "too short: none")
    }
}
