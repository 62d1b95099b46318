import FrameWire
import Foundation

/// A dump cut into messages: each frame's exact bytes (with any empty lines before it), its header and its
/// due time; plus what a looped pass changes so that a looped stream looks like a live sender's.
struct ReplayPlan {
    struct Segment {
        /// The message's bytes in the dump, with the empty lines before its status line.
        var range: Range<Int>
        /// The frame's body bytes in the dump.
        var body: Range<Int>
        var index: Int
        var header: FrameHeader
        /// The header of a sound message (Protocol/frame-wire.md §2.10); nil for a picture. A sound segment is
        /// due when the picture before it was, plus its own timestamp's distance from that picture's (0…5 s),
        /// and is never replaced by a later message (``FrameSender/offerSound(_:durationMicros:)``).
        var sound: SoundHeader?
        /// Microseconds after the first frame per `Buffer-Timestamp` (pacing by timestamps).
        var timestampOffset: UInt64

        /// When this segment is due, in µs after the start of the pass, or nil for no pacing.
        func due(_ pacing: ReplayCommand.Pacing) -> UInt64? {
            switch pacing {
            case .timestamps: timestampOffset
            case .fps(let fps): UInt64(Double(index) * 1e6 / fps)
            case .asFastAsPossible: nil
            }
        }
    }

    let bytes: Data
    private(set) var segments: [Segment] = []
    /// Bytes after the last whole frame (a truncated frame or a wire-format fault), sent as is.
    private(set) var tail: Range<Int> = 0..<0
    private(set) var end: FrameStreamEnd = .eof
    /// Timestamp gaps that were negative or above ``maxGapMicros`` and replaced by ``defaultGapMicros``.
    private(set) var clampedGaps = 0
    /// The median of the kept timestamp gaps (else ``defaultGapMicros``): the gap between two looped passes.
    private(set) var typicalGapMicros = ReplayPlan.defaultGapMicros
    /// What a looped pass adds to each `Buffer-Timestamp`: the dump's timestamp span plus one typical gap,
    /// so every timestamp of a pass is above every one of the pass before.
    private(set) var timestampShift: UInt64 = 0
    /// What a looped pass adds to each `Buffer-Sequence`: the span of the dump's sequence numbers plus one.
    private(set) var sequenceShift: UInt64 = 0
    /// The same for `Sound-Sequence`.
    private(set) var soundSequenceShift: UInt64 = 0
    /// Sound messages in ``segments``.
    private(set) var soundSegments = 0

    /// One frame at 30 fps, µs: the gap used without (usable) timestamps.
    static let defaultGapMicros: UInt64 = 33_333
    /// The longest timestamp gap kept as is, µs (5 s; a static screen's keepalives are 2 s apart).
    static let maxGapMicros: UInt64 = 5_000_000

    init(path: String) throws {
        bytes = try DumpFile.contents(of: path)
        var decoder = FrameDecoder()
        var previousEnd = 0
        var previousStamp: UInt64?
        var lastOffset: UInt64 = 0
        var segments: [Segment] = []
        var end = FrameStreamEnd.eof
        var clamped = 0
        var keptGaps: [UInt64] = []
        var stamps: ClosedRange<UInt64>?
        var sequences: ClosedRange<UInt64>?
        var soundSequences: ClosedRange<UInt64>?
        var sounds = 0
        /// The last picture's due offset and timestamp, which a sound message after it is placed against.
        var anchor: (offset: UInt64, stamp: UInt64?, index: Int)?
        var firstSoundStamp: UInt64?
        let handle: (FrameDecoderEvent) -> Void = { event in
            switch event {
            case .frame(let frame):
                let frameEnd = frame.offset + frame.messageLength
                // The gap to the previous frame: from Buffer-Timestamp when both have one and it is within
                // 0…maxGap, else one frame at 30 fps. Offsets therefore never overflow or run backwards.
                var gap: UInt64 = ReplayPlan.defaultGapMicros
                if let stamp = frame.header.timestampMicros, let previous = previousStamp {
                    if stamp >= previous, stamp - previous <= ReplayPlan.maxGapMicros {
                        gap = stamp - previous
                        if gap > 0 { keptGaps.append(gap) }
                    } else {
                        clamped += 1
                    }
                }
                previousStamp = frame.header.timestampMicros
                if let stamp = frame.header.timestampMicros { stamps = widen(stamps, stamp) }
                if let sequence = frame.header.sequence { sequences = widen(sequences, sequence) }
                let offset = segments.count == sounds ? 0 : lastOffset + gap
                let pictureIndex = segments.count - sounds
                segments.append(Segment(
                    range: previousEnd..<frameEnd, body: (frameEnd - frame.body.count)..<frameEnd,
                    index: pictureIndex, header: frame.header, timestampOffset: offset))
                lastOffset = offset
                previousEnd = frameEnd
                anchor = (offset, frame.header.timestampMicros, pictureIndex)
            case .sound(let sound):
                let soundEnd = sound.offset + sound.messageLength
                let stamp = sound.header.timestampMicros
                stamps = widen(stamps, stamp)
                if let sequence = sound.header.sequence { soundSequences = widen(soundSequences, sequence) }
                // Due against the picture before it (by their timestamps, 0…maxGap apart), else against the
                // first sound message when no picture came yet.
                var offset: UInt64 = 0
                if let anchor {
                    offset = anchor.offset
                    if let pictureStamp = anchor.stamp, stamp >= pictureStamp, stamp - pictureStamp <= ReplayPlan.maxGapMicros {
                        offset += stamp - pictureStamp
                    }
                } else if let first = firstSoundStamp, stamp >= first, stamp - first <= ReplayPlan.maxGapMicros {
                    offset = stamp - first
                }
                firstSoundStamp = firstSoundStamp ?? stamp
                var segment = Segment(
                    range: previousEnd..<soundEnd, body: (soundEnd - sound.body.count)..<soundEnd,
                    index: anchor?.index ?? 0, header: FrameHeader(contentLength: 0, bufferWidth: 0, bufferHeight: 0),
                    timestampOffset: offset)
                segment.sound = sound.header
                segments.append(segment)
                sounds += 1
                previousEnd = soundEnd
            case .end(let streamEnd):
                end = streamEnd
            }
        }
        bytes.withUnsafeBytes { decoder.feed($0, emit: handle) }
        decoder.finish(emit: handle)
        self.segments = segments
        self.end = end
        self.clampedGaps = clamped
        if end != .eof { tail = previousEnd..<bytes.count }
        if !keptGaps.isEmpty { typicalGapMicros = keptGaps.sorted()[keptGaps.count / 2] }
        if let stamps { timestampShift = saturatingAdd(stamps.upperBound - stamps.lowerBound, typicalGapMicros) }
        if let sequences { sequenceShift = saturatingAdd(sequences.upperBound - sequences.lowerBound, 1) }
        if let soundSequences { soundSequenceShift = saturatingAdd(soundSequences.upperBound - soundSequences.lowerBound, 1) }
        soundSegments = sounds
    }

    /// One pass's length in µs (the last frame's due time plus one frame interval), nil without pacing.
    func duration(_ pacing: ReplayCommand.Pacing) -> UInt64? {
        guard let last = segments.last, let due = last.due(pacing) else { return nil }
        let interval: UInt64 = if case .fps(let fps) = pacing { UInt64(1e6 / fps) } else { typicalGapMicros }
        return due + interval
    }

    /// The message to send for `segment` in pass `pass` (0 for the first). The first pass sends the dump's
    /// bytes exactly; later passes re-encode (with `FrameEncoder`) frames that carry `Buffer-Timestamp` or
    /// `Buffer-Sequence`, shifted by ``timestampShift`` / ``sequenceShift`` per pass (saturating at 2^64-1),
    /// so a looped stream looks like a live sender's. Other frames stay byte-exact.
    func message(_ segment: Segment, pass: UInt64) -> [UInt8] {
        if var sound = segment.sound {
            guard pass > 0 else { return Array(bytes[segment.range]) }
            sound.timestampMicros = saturatingAdd(sound.timestampMicros, saturatingMultiply(timestampShift, pass))
            sound.sequence = sound.sequence.map { saturatingAdd($0, saturatingMultiply(soundSequenceShift, pass)) }
            return FrameEncoder.encodeSound(header: sound, body: Array(bytes[segment.body]))
        }
        var header = segment.header
        guard pass > 0, header.timestampMicros != nil || header.sequence != nil else {
            return Array(bytes[segment.range])
        }
        header.timestampMicros = header.timestampMicros.map { saturatingAdd($0, saturatingMultiply(timestampShift, pass)) }
        header.sequence = header.sequence.map { saturatingAdd($0, saturatingMultiply(sequenceShift, pass)) }
        return FrameEncoder.encode(header: header, body: Array(bytes[segment.body]))
    }
}

private func widen(_ range: ClosedRange<UInt64>?, _ value: UInt64) -> ClosedRange<UInt64> {
    guard let range else { return value...value }
    return min(range.lowerBound, value)...max(range.upperBound, value)
}

private func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? .max : sum
}

private func saturatingMultiply(_ a: UInt64, _ b: UInt64) -> UInt64 {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? .max : product
}
