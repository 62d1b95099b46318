@testable import AudioSource
import FrameWire
import ScreencastSupport
import Synchronization
import XCTest

final class AudioTimelineTests: XCTestCase {
    /// A stereo message of `samples` per channel whose left channel counts up from `first` and right counts down.
    private func message(samples: Int, first: Int, stamp: UInt64, channels: Int = 2, rate: Int = 48000) -> (SoundHeader, [UInt8]) {
        var body: [UInt8] = []
        for i in 0..<samples {
            for c in 0..<channels {
                let v = Int16(truncatingIfNeeded: c == 0 ? first + i : -(first + i))
                body.append(UInt8(truncatingIfNeeded: v)); body.append(UInt8(truncatingIfNeeded: v >> 8))
            }
        }
        return (SoundHeader(rate: rate, channels: channels, samples: samples, timestampMicros: stamp), body)
    }

    private func push(_ t: inout AudioTimeline, _ m: (SoundHeader, [UInt8]), now: UInt64) throws -> [AudioFrame] {
        try m.1.withUnsafeBytes { raw in try t.push(m.0, body: raw, now: now) }
    }

    func testAgentSoundBecomesFramesWithItsSamplesAndStamps() throws {
        var t = AudioTimeline(configuration: .init())
        var frames: [AudioFrame] = []
        for k in 0..<5 {
            frames += try push(&t, message(samples: 480, first: k * 480, stamp: 1_000_000 + UInt64(k) * 10_000), now: 1_030_000 + UInt64(k) * 10_000)
        }
        XCTAssertEqual(frames.count, 5)
        for (k, f) in frames.enumerated() {
            XCTAssertEqual(f.origin, .screen)
            XCTAssertEqual(f.sampleTime, UInt64(k * 480))
            XCTAssertEqual(f.captureMicros, 1_000_000 + UInt64(k) * 10_000)
            XCTAssertEqual(f.samples[0], Int16(k * 480))
            XCTAssertEqual(f.samples[1], -Int16(k * 480))
            XCTAssertEqual(f.samples[958], Int16(k * 480 + 479))
        }
        XCTAssertEqual(t.stats.screenFrames, 5)
        XCTAssertEqual(t.stats.insertedSamples + t.stats.droppedSamples + t.stats.reanchors, 0)
    }

    func testOddMessageSizesAreRechunkedWithoutLosingASample() throws {
        var t = AudioTimeline(configuration: .init())
        var frames: [AudioFrame] = []
        var first = 0
        var stamp: UInt64 = 5_000_000
        for _ in 0..<12 {  // 441 samples = 9.1875 ms each
            frames += try push(&t, message(samples: 441, first: first, stamp: stamp), now: stamp + 20_000)
            first += 441
            stamp += 9_187
        }
        XCTAssertEqual(frames.count, 12 * 441 / 480)
        let left = frames.flatMap { f in stride(from: 0, to: 960, by: 2).map { Int(f.samples[$0]) } }
        XCTAssertEqual(left, Array(0..<left.count), "every sample once, in order")
    }

    func testMonoIsDoubledToBothChannels() throws {
        var t = AudioTimeline(configuration: .init())
        let frames = try push(&t, message(samples: 480, first: 100, stamp: 1_000, channels: 1), now: 2_000)
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(frames[0].samples[0], 100)
        XCTAssertEqual(frames[0].samples[1], 100)
        XCTAssertEqual(frames[0].samples[959], 579)
    }

    /// A `Sound-Timestamp` that is no time of this clock (a forged u64, a replayed dump's old times) is replaced
    /// by now: the call went down on `UInt64.max` (an overflow in the timeline's arithmetic).
    func testImplausibleStampsAreReplacedByNowAndNothingOverflows() throws {
        let now: UInt64 = 50_000_000
        for stamp in [UInt64.max, UInt64.max - 10_000, 1 << 63, now + 2_000_000, now - 6_000_000, 0] {
            var t = AudioTimeline(configuration: .init())
            var frames: [AudioFrame] = []
            for k in 0..<3 {
                frames += try push(&t, message(samples: 480, first: k * 480, stamp: stamp &+ UInt64(k) * 10_000), now: now + UInt64(k) * 10_000)
            }
            XCTAssertEqual(frames.first?.captureMicros, now, "\(stamp)")
            XCTAssertEqual(frames.count, 3)
            XCTAssertEqual(t.stats.restamped, 3)
            XCTAssertEqual(t.tick(now: now + 200_000).count, 17, "then silence up to now (30 to 190 ms), no overflow")
        }
        var t = AudioTimeline(configuration: .init())
        _ = try push(&t, message(samples: 480, first: 0, stamp: now - 40_000), now: now)
        _ = try push(&t, message(samples: 480, first: 0, stamp: now + 500_000), now: now)
        XCTAssertEqual(t.stats.restamped, 0, "5 s back and 1 s ahead are this clock's")
    }

    func testOtherRatesAndChannelCountsAreRefusedAndCounted() throws {
        var t = AudioTimeline(configuration: .init())
        XCTAssertThrowsError(try push(&t, message(samples: 441, first: 0, stamp: 0, rate: 44100), now: 0)) {
            XCTAssertEqual($0 as? AudioSourceError, .unsupportedFormat(rate: 44100, channels: 2))
        }
        XCTAssertThrowsError(try push(&t, message(samples: 480, first: 0, stamp: 0, channels: 6), now: 0))
        XCTAssertEqual(t.stats.unsupportedMessages, 2)
        XCTAssertEqual(t.stats.frames, 0)
    }

    func testIdleSilenceKeepsTheClockOneFramePerTenMilliseconds() {
        var t = AudioTimeline(configuration: .init())
        XCTAssertEqual(t.tick(now: 1_000_000).count, 0, "the first tick anchors the timeline")
        XCTAssertEqual(t.tick(now: 1_009_999).count, 0)
        let frames = t.tick(now: 1_035_000)
        XCTAssertEqual(frames.map(\.sampleTime), [0, 480, 960])
        XCTAssertEqual(frames.map(\.captureMicros), [1_000_000, 1_010_000, 1_020_000])
        XCTAssertTrue(frames.allSatisfy { $0.origin == .silence && $0.samples.allSatisfy { $0 == 0 } })
        XCTAssertEqual(t.tick(now: 1_040_000).count, 1)
    }

    func testTheToneHasItsFrequencyAndLevel() {
        var t = AudioTimeline(configuration: .init(idle: .tone(frequencyHz: 1000, levelDBFS: -20)))
        var frames: [AudioFrame] = []
        for ms in stride(from: 0, through: 1000, by: 10) { frames += t.tick(now: UInt64(ms) * 1000) }  // one second
        XCTAssertEqual(frames.count, 100)
        let left = frames.flatMap { f in stride(from: 0, to: 960, by: 2).map { Double(f.samples[$0]) } }
        var rising = 0
        for i in 1..<left.count where left[i - 1] < 0 && left[i] >= 0 { rising += 1 }
        XCTAssertEqual(rising, 1000, accuracy: 1, "1000 Hz: 1000 upward zero crossings in a second")
        let rms = (left.reduce(0) { $0 + $1 * $1 } / Double(left.count)).squareRoot() / 32768
        XCTAssertEqual(20 * log10(rms), -20, accuracy: 0.05)
        XCTAssertTrue(frames.allSatisfy { $0.origin == .tone })
        XCTAssertEqual(frames[0].samples[0], frames[0].samples[1], "both channels")
    }

    func testAfterTheAgentStopsTheIdleContentGoesOnFromWhereItsSoundEnded() throws {
        var t = AudioTimeline(configuration: .init())
        var frames = try push(&t, message(samples: 720, first: 1, stamp: 2_000_000), now: 2_020_000)  // 1.5 frames
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(t.tick(now: 2_050_000).count, 0, "within the hold time the agent's sound drives")
        frames = t.tick(now: 2_130_000)  // hold (100 ms) passed
        XCTAssertEqual(frames.first?.origin, .screen, "the partial frame first, padded with silence")
        XCTAssertEqual(frames.first?.samples[2 * 239], 720)
        XCTAssertEqual(frames.first?.samples[2 * 240], 0)
        XCTAssertEqual(frames.map(\.sampleTime), (1..<frames.count + 1).map { UInt64($0 * 480) })
        XCTAssertEqual(frames.last?.captureMicros, 2_120_000, "silence up to now (its last whole 10 ms)")
        XCTAssertTrue(frames.dropFirst().allSatisfy { $0.origin == .silence })
    }

    func testStampsFarFromTheTimelineFillTheGapDropTheOverlapOrReanchor() throws {
        var t = AudioTimeline(configuration: .init())
        _ = try push(&t, message(samples: 480, first: 0, stamp: 1_000_000), now: 1_000_000)
        // 100 ms later than expected: 90 ms of silence put in (beyond the 40 ms slip).
        var frames = try push(&t, message(samples: 480, first: 7, stamp: 1_100_000), now: 1_100_000)
        XCTAssertEqual(t.stats.insertedSamples, 4320)
        XCTAssertEqual(frames.count, 10)
        XCTAssertEqual(frames.last?.samples[0], 7)
        XCTAssertEqual(frames.last?.captureMicros, 1_100_000, "the agent's stamp and the timeline agree again")
        // 60 ms earlier than expected: the first 60 ms are dropped.
        frames = try push(&t, message(samples: 4800, first: 0, stamp: 1_050_000), now: 1_120_000)
        XCTAssertEqual(t.stats.droppedSamples, 2880)
        XCTAssertEqual(frames.first?.samples[0], 2880)
        // Most of a second off the timeline (a stall of the sound server): the capture time jumps, the sample
        // clock goes on.
        let before = frames.last!.sampleTime
        frames = try push(&t, message(samples: 480, first: 0, stamp: 2_000_000), now: 1_200_000)
        XCTAssertEqual(t.stats.reanchors, 1)
        XCTAssertEqual(frames.first?.captureMicros, 2_000_000)
        XCTAssertEqual(frames.first?.sampleTime, before + 480)
    }
}

final class SharedAudioSourceTests: XCTestCase {
    final class Collector: AudioSink, Sendable {
        let frames = Mutex<[AudioFrame]>([])
        let finished = Mutex(false)
        func consume(_ frame: AudioFrame) { frames.withLock { $0.append(frame) } }
        func finish() { finished.withLock { $0 = true } }
    }

    func testSinksGetTheAgentsSoundThenTheToneInOrderAndFinishOnStop() throws {
        let now = Mutex<UInt64>(1_000_000)
        let source = try SharedAudioSource(
            configuration: .init(idle: .tone(frequencyHz: 440, levelDBFS: -12)), logger: Logger(component: "audio", threshold: .error),
            clock: { now.withLock { $0 } })
        let sink = Collector()
        _ = source.add(sink)
        var body = [UInt8](repeating: 0, count: 1920)
        body[0] = 42
        source.push(SoundHeader(samples: 480, timestampMicros: 990_000), body: body)
        now.withLock { $0 = 1_300_000 }
        source.tick()
        source.stop()
        let frames = sink.frames.withLock { $0 }
        XCTAssertEqual(frames.first?.origin, .screen)
        XCTAssertEqual(frames.first?.samples[0], 42)
        XCTAssertEqual(frames.map(\.sampleTime), (0..<frames.count).map { UInt64($0 * 480) })
        XCTAssertEqual(frames.count, 31, "10 ms of the agent, then the tone up to 1.3 s")
        XCTAssertTrue(sink.finished.withLock { $0 })
        source.push(SoundHeader(samples: 480, timestampMicros: 1_300_000), body: body)
        XCTAssertEqual(sink.frames.withLock { $0.count }, 31, "nothing after stop")
    }

    func testAToneOutOfRangeIsRefused() {
        XCTAssertThrowsError(try SharedAudioSource(configuration: .init(idle: .tone(frequencyHz: 5, levelDBFS: -10)), logger: Logger(component: "a")))
        XCTAssertThrowsError(try SharedAudioSource(configuration: .init(idle: .tone(frequencyHz: 1000, levelDBFS: 0)), logger: Logger(component: "a")))
    }
}
