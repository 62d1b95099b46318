public import ScreencastSupport
public import Signaling
import AAC
import AudioSource
import OpusCodec
import Synchronization
import Sharing
import VideoSource

/// Names one output of a call (for ``Call/remove(_:)``).
public struct OutputID: Sendable, Hashable, CustomStringConvertible {
    let value: Int
    public var description: String { "output-\(value)" }
}

extension Call {
    /// What an output consuming `selection` may ask of its encoding, under the name `consumer` (its rate reports
    /// count beside the viewers'). Make the output with it, then ``add(_:)`` it.
    /// - Throws: ``CallError/unsupportedSelection(output:selection:)`` when the call has no such encoding.
    /// ``MediaSelection/videoH264`` makes the call's H.264 encoding when it has none yet (once, for every
    /// output that consumes it; started when the call runs).
    public func context(for selection: MediaSelection, consumer: String) throws(CallError) -> OutputContext {
        if selection == .videoH264 { return Self.context(h264: h264Encoding(), consumer: consumer) }
        guard selection == video.selection else { throw .unsupportedSelection(output: consumer, selection: selection.description) }
        return Self.context(video: video, hub: viewers.hub, consumer: consumer)
    }

    /// The encoder of `codec` for the call's audio (48 kHz stereo), set from `configuration`.
    /// - Throws: ``CallError/audio(_:)``.
    static func makeAudioEncoder(_ codec: AudioCodec, configuration: CallConfiguration) throws(CallError) -> any AudioEncoder {
        switch codec {
        case .opus:
            do { return try OpusEncoder(settings: configuration.opus) } catch { throw .audio("\(error)") }
        case .aac:
            do { return try AACEncoder() } catch { throw .audio("AAC-LC encoder: \(error)") }
        }
    }

    /// `/stats` `audio`: the source's counters and each encoding's.
    var audioJSON: JSONValue {
        let s = audio.stats
        let level: JSONValue = s.lastLevelDBFS.map { $0.isFinite ? .double(($0 * 10).rounded() / 10) : .string("-inf") } ?? .null
        let encodings = audioEncodings.all.map { ($0.codec.rawValue, $0.json) }
        return .object([
            ("idle", .string(configuration.audio.idle == .silence ? "silence" : "tone")),
            ("frames", .object([
                ("screen", .int(Int64(s.screenFrames))), ("silence", .int(Int64(s.silenceFrames))), ("tone", .int(Int64(s.toneFrames))),
            ])),
            ("screenMessages", .int(Int64(s.screenMessages))), ("unsupportedMessages", .int(Int64(s.unsupportedMessages))),
            ("insertedSamples", .int(Int64(s.insertedSamples))), ("droppedSamples", .int(Int64(s.droppedSamples))),
            ("reanchors", .int(Int64(s.reanchors))), ("levelDBFS", level), ("encodings", .object(encodings)),
        ])
    }

    /// The H.264 encoding, made (and started, when the call runs) the first time it is asked for.
    func h264Encoding() -> H264Encoding {
        let (encoding, made) = h264.withLock { h -> (H264Encoding, Bool) in
            if let h { return (h, false) }
            let encoding = H264Encoding(
                source: video.source, clock: video.source.captureClock, bitsPerSecond: configuration.streaming.bitsPerSecond,
                logger: logger.named("h264"))
            h = encoding
            return (encoding, true)
        }
        if made, runningPhase == .running { encoding.start() }
        return encoding
    }

    /// An H.264 consumer's context: keyframes from the H.264 encoder. Its bitrate reports go nowhere yet (the
    /// H.264 target is fixed; the viewers' rate policy is VP8's).
    static func context(h264: H264Encoding, consumer: String) -> OutputContext {
        OutputContext(
            consumer: consumer, selection: h264.selection, requestKeyframe: { [weak h264] in h264?.requestKeyframe() },
            reportBitrate: { _, _ in }, reportHeard: {})
    }

    static func context(video: VideoEncoding, hub: ViewerHub, consumer: String) -> OutputContext {
        OutputContext(
            consumer: consumer, selection: video.selection,
            requestKeyframe: { [source = video.source] in source.requestKeyframe() },
            reportBitrate: { [weak hub] bitsPerSecond, source in hub?.consumerEstimate(consumer, bitsPerSecond: bitsPerSecond, source: source) },
            reportHeard: { [weak hub] in hub?.consumerHeard(consumer) })
    }

    /// Adds an output: it gets the encoding of what it consumes from the next frame on (a keyframe is asked
    /// for, so a recording starts decodable), and starts at once when the call runs (else with ``start()``).
    /// - Returns: its id, for ``remove(_:)``.
    /// - Throws: ``CallError/unsupportedSelection(output:selection:)`` (no such encoding, or an inlet of another
    ///   track), ``CallError/alreadyStarted`` once the call has stopped.
    @discardableResult
    public func add(_ output: any CallOutput) throws(CallError) -> OutputID {
        guard output.consumes == video.selection || output.consumes == .videoH264, output.inlet.track == output.consumes.track,
              case .video(let sink) = output.inlet else {
            throw .unsupportedSelection(output: output.name, selection: output.consumes.description)
        }
        let phase = runningPhase
        guard phase != .stopped else { throw .alreadyStarted }
        let sound = try audioEncodings.attach(output)
        let h264 = output.consumes == .videoH264 ? h264Encoding() : nil
        let attachment = h264.map { VideoEncoding.Attachment(protection: .clear, id: $0.fanOut.add(sink), codec: .h264) }
            ?? video.attach(sink, protection: output.protection)
        let id = outputs.withLock { o -> OutputID in
            let id = OutputID(value: o.next)
            o.next += 1
            o.list.append(Entry(id: id, output: output, attachment: attachment, audioAttachment: sound))
            return id
        }
        if phase == .running {
            output.start()
            if let h264 { h264.requestKeyframe() } else { video.source.requestKeyframe() }
        }
        logger.info("output added", ["output": output.name, "id": id, "consumes": output.consumes, "protection": "\(output.protection)"])
        return id
    }

    /// Takes an output off its encoding, stops it and finishes its inlet (a recording's file is closed); the
    /// other outputs go on. The viewers stay for the call's life (they keep the rate policy).
    /// - Returns: `.success` when the removed output's work is whole, `.failure` with why not
    ///   (``CallOutput/checkComplete()``); nil when `id` names no removable output.
    @discardableResult
    public func remove(_ id: OutputID) -> Result<Void, OutputIncomplete>? {
        let removed = outputs.withLock { o -> Entry? in
            guard let index = o.list.firstIndex(where: { $0.id == id }), !(o.list[index].output is ViewersOutput) else { return nil }
            return o.list.remove(at: index)
        }
        guard let entry = removed else { return nil }
        if entry.attachment.codec == .h264 {
            h264.withLock { $0 }?.fanOut.remove(entry.attachment.id)
        } else {
            video.detach(entry.attachment)
        }
        if let sound = entry.audioAttachment { audioEncodings.detach(sound) }
        entry.output.stop()
        if case .video(let sink) = entry.output.inlet { sink.finish() }
        entry.output.audioInlet?.finish()
        logger.info("output removed", ["output": entry.output.name, "id": id])
        if let reason = entry.output.checkComplete() { return .failure(OutputIncomplete(output: entry.output.name, reason: reason)) }
        return .success(())
    }

    /// The outputs now, in the order they were added (the viewers among them).
    public var outputList: [(id: OutputID, output: any CallOutput)] { outputs.withLock { $0.list.map { ($0.id, $0.output) } } }

    /// `/stats` as JSON: version, uptime, the viewer page, the source's numbers, `viewers`, `e2ee`, then every
    /// other output's entry (`sfu`).
    public var statsJSON: JSONValue {
        var others = outputs.withLock { $0.list }.filter { !($0.output is ViewersOutput) }.compactMap { $0.output.stats }
        if let h264 = h264.withLock({ $0 }) { others.insert(("h264", h264.json), at: 0) }
        others.insert(("audio", audioJSON), at: 0)
        return CallStats.json(
            source: video.source, viewers: viewers.hub.json, e2ee: video.encryption, e2eeAudio: rotation?.audio, about: about,
            outputs: others)
    }

    /// What the viewer page shows of the sharer (`GET /source`): ``SharerState/ended`` once the call is stopping,
    /// else from the source (``sharerState(of:)``).
    public var sharerState: SharerState {
        stopRequest.current != nil ? .ended : video.source.isPaused ? .paused : Self.sharerState(of: video.source.stats)
    }

    /// Live while pictures come (an agent that has sent one is connected, or the test pattern or a file plays);
    /// paused once an agent shared and is gone (its last picture stays); waiting before anything was shared.
    static func sharerState(of stats: VideoSourceStats) -> SharerState {
        switch stats.source {
        case .testPattern?, .file?: .live
        case .screen?: stats.screenConnected && stats.senders > 0 ? .live : .paused
        case nil: stats.sendersTotal > 0 ? .paused : .waiting
        }
    }

    /// `/metrics`: the counters in the Prometheus text format 0.0.4 (``CallMetrics``).
    public var metricsText: String {
        let others = outputs.withLock { $0.list }.filter { !($0.output is ViewersOutput) }.map { ($0.output.name, $0.output.stats?.value) }
        return CallMetrics.text(
            source: video.source.stats, viewers: viewers.hub.metrics, maxViewers: configuration.maxViewers, e2ee: video.encryption?.stats,
            outputs: others, process: ProcessMetrics.current())
    }

    /// `/stats?format=text`: a few lines for people, from ``statsJSON``.
    public var statsText: String { CallStats.text(statsJSON) }
}

/// An output whose work is incomplete, and why.
public struct OutputIncomplete: Error, Sendable {
    /// Its name (`ivf`).
    public let output: String
    /// Why (the first failed write's `strerror`, …).
    public let reason: String
}
