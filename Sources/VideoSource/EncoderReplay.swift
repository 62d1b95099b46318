import FrameWire
public import Media
import ScreencastSupport

/// The call's encoder loop (`EncoderLoop`: scheduler, rate policy, byte budget, real libvpx) driven in
/// memory with virtual time, for measuring what it emits against its target (tests, `screencast-bench
/// --stage ratecontrol`). Nothing here sleeps: the clock jumps to the next event.
///
/// Pictures are played in a loop at their own timestamps' pace, each submitted at the virtual time it is
/// due, exactly as `FileCapturer` would; bitrate changes and keyframe requests arrive at their times
/// through the same hub the call's peers use.
package enum EncoderReplay {
    /// Why a frame was encoded.
    package enum Kind: String, Sendable, CaseIterable {
        /// A new picture.
        case newFrame = "new"
        /// An idle re-encode at a lower quantizer ceiling.
        case refinement
        /// An idle repeat of the refined picture.
        case repeatFrame = "repeat"
        /// The last picture re-encoded as a requested keyframe.
        case keyframeRequest = "keyframe-request"
    }

    /// One encoded frame as delivered to the sinks.
    package struct Record: Sendable, Equatable {
        /// Virtual time of the encode, µs from the start of the replay.
        package var atMicros: UInt64
        /// Size of the VP8 frame, bytes.
        package var bytes: Int
        /// Whether it is a keyframe.
        package var isKeyframe: Bool
        /// Why it was encoded.
        package var kind: Kind
        /// libvpx's quantizer for it, 0…63 (-1 unknown).
        package var quantizer: Int
        /// Whether it is a non-reference frame (the droppable cadence; ``Media/EncodedFrame/isDroppable``).
        package var isDroppable: Bool = false
    }

    /// Something a consumer does during the replay.
    package enum Event: Sendable, Equatable {
        /// `VideoSource.setBitrate(kbps:)`.
        case bitrate(Int?)
        /// `VideoSource.requestKeyframe()`.
        case keyframeRequest
        /// `VideoSource.setDroppableCadence(period:)`.
        case droppableCadence(Int?)
    }

    /// What came out.
    package struct Result: Sendable {
        /// Every encoded frame, in order.
        package var records: [Record]
        /// The source's counters at the end (as `/stats` would show them).
        package var stats: VideoSourceStats
        /// Length of the replay, µs.
        package var durationMicros: UInt64
        /// The encoded frames themselves, in order (only with `keepFrames`; else empty).
        package var frames: [EncodedFrame] = []
    }

    /// The pictures of a `.frames` dump, decoded by the call's own pipeline (`WireFramePipeline`: JPEG or
    /// I420 → upright BT.601 limited-range I420), timestamps in µs from the first frame; frames that do not
    /// decode are left out. `scaledTo` resizes each (libyuv bilinear), e.g. to replay 640×360 fixtures at 1280×720.
    /// - Throws: `VideoSourceError.unreadableDump` (unreadable file, no frame), `.emptyDump` (none decodes), `.media`.
    package static func pictures(fromDump path: String, scaledTo size: PictureSize? = nil) throws(VideoSourceError) -> [VideoFrame] {
        let bytes = try FileCapturer.readDump(path)
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        decoder.feed(bytes) { if case .frame(let frame) = $0 { frames.append(frame) } }
        decoder.finish { if case .frame(let frame) = $0 { frames.append(frame) } }
        let pipeline: WireFramePipeline
        do {
            pipeline = try WireFramePipeline(pool: FramePool(), logger: Logger(component: "replay", threshold: .error),
                                             maximumDimension: 16384, maximumDecodePixels: 16384 * 16384)
        } catch {
            throw .media(error)
        }
        var pictures: [VideoFrame] = []
        let first = frames.first?.header.timestampMicros ?? 0
        for (index, frame) in frames.enumerated() {
            let time = frame.header.timestampMicros.map { $0 >= first ? $0 - first : 0 } ?? UInt64(index) * 33_333
            guard case .success(var decoded) = pipeline.process(frame, captureTimestampMicros: time) else { continue }
            if let size, size != PictureSize(width: decoded.width, height: decoded.height) {
                var scaled = I420Buffer(width: size.width, height: size.height, colorSpace: decoded.picture.colorSpace)
                do throws(MediaError) {
                    try decoded.picture.scaled(to: size, filter: .bilinear, into: &scaled)
                } catch {
                    throw .media(error)
                }
                decoded.picture = scaled
            }
            pictures.append(decoded)
        }
        guard !pictures.isEmpty else { throw .emptyDump(path: path) }
        return pictures
    }

    /// Replays `pictures` (looped, at their timestamps' pace; one loop lasts from the first to the last
    /// plus the mean gap) for `seconds` through the call's encoder loop set up by `configuration` (its
    /// `socketPath` and `fallback` are ignored).
    /// - Parameters:
    ///   - events: (µs from the start, event), in any order.
    ///   - keepFrames: keep every encoded frame in ``Result/frames`` (to decode them; memory grows with the replay).
    package static func run(
        pictures: [VideoFrame], seconds: Double, configuration: VideoSourceConfiguration,
        events: [(atMicros: UInt64, event: Event)] = [], keepFrames: Bool = false
    ) -> Result {
        let start: UInt64 = 1_000_000
        let clock = ManualVideoClock(startMicros: start)
        let hub = SourceHub(stats: StatsRecorder(fallback: nil, startedAt: start), pool: FramePool())
        hub.activate(.file)
        let loop = EncoderLoop(hub: hub, sinks: SinkRegistry(), configuration: configuration, clock: clock,
                               logger: Logger(component: "replay", threshold: .error))
        var state = loop.makeState()
        nonisolated(unsafe) var records: [Record] = []  // appended on this thread only, by the loop's observer
        nonisolated(unsafe) var frames: [EncodedFrame] = []
        state.observer = { frame, reason in
            records.append(Record(atMicros: clock.nowMicros() - start, bytes: frame.bytes.count, isKeyframe: frame.isKeyframe,
                                  kind: Kind(reason), quantizer: frame.quantizer, isDroppable: frame.isDroppable))
            if keepFrames { frames.append(frame) }
        }
        let end = UInt64((seconds * 1e6).rounded())
        let times = pictures.map(\.captureTimestampMicros)
        let span = (times.last ?? 0) - (times.first ?? 0)
        let period = span + (pictures.count > 1 ? span / UInt64(pictures.count - 1) : 1_000_000)
        let sortedEvents = events.sorted { $0.atMicros < $1.atMicros }
        var (nextPicture, nextEvent, cycle): (Int, Int, UInt64) = (0, 0, 0)
        func pictureTime() -> UInt64 { cycle * period + times[nextPicture] - times[0] }
        var now: UInt64 = 0
        while now <= end {
            while !pictures.isEmpty, pictureTime() <= now {
                var frame = pictures[nextPicture]
                frame.captureTimestampMicros = start + now
                hub.submit(frame, from: .file)
                nextPicture += 1
                if nextPicture == pictures.count { (nextPicture, cycle) = (0, cycle + 1) }
            }
            while nextEvent < sortedEvents.count, sortedEvents[nextEvent].atMicros <= now {
                switch sortedEvents[nextEvent].event {
                case .bitrate(let kbps): hub.requestBitrate(kbps)
                case .keyframeRequest: hub.requestKeyframe()
                case .droppableCadence(let period): hub.requestDroppableCadence(period)
                }
                nextEvent += 1
            }
            var wait: UInt64?
            while true {
                guard case .wait(let micros) = loop.step(&state) else { continue }
                wait = micros
                break
            }
            var next = min(end + 1, now + max(1, wait ?? .max / 2))
            if !pictures.isEmpty { next = min(next, pictureTime()) }
            if nextEvent < sortedEvents.count { next = min(next, sortedEvents[nextEvent].atMicros) }
            now = max(now + 1, next)
            clock.set(start + now)
        }
        var stats = hub.stats.snapshot(now: clock.nowMicros(), queueDepth: hub.queueDepth)
        stats.bitrateKbps = loop.currentBitrate.load(ordering: .relaxed)
        return Result(records: records, stats: stats, durationMicros: end, frames: frames)
    }
}

extension EncoderReplay.Kind {
    init(_ reason: EncodeScheduler.Reason) {
        switch reason {
        case .newFrame: self = .newFrame
        case .refinement: self = .refinement
        case .repeatFrame: self = .repeatFrame
        case .keyframeRequest: self = .keyframeRequest
        }
    }
}
