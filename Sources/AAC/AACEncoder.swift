public import AudioSource
internal import CAVCodec

/// AAC-LC (ISO/IEC 14496-3) of the call's sound through FFmpeg's native `aac` encoder (libavcodec's
/// `avcodec_send_frame`/`avcodec_receive_packet`): the one owner of its `AVCodecContext`, `AVFrame` and
/// `AVPacket`, freed in `deinit`. What RTMP destinations (FLV audio tags) and MP4 recordings carry.
///
/// - In: 10-ms ``AudioFrame``s (48 kHz, stereo, S16 interleaved), on one continuous sample clock.
/// - Buffered into AAC frames of ``frameSamples`` (1024) samples per channel, converted to float planar
///   (`AV_SAMPLE_FMT_FLTP`, what the native encoder takes: sample ÷ 32768).
/// - Out: raw AAC access units (no ADTS header), ``EncodedAudioFrame/sampleTime`` = the encoder's PTS on the
///   source's 48 kHz sample clock. The encoder's priming (``primingSamples``, 1024: its first packet covers
///   the 1024 samples before the first input) makes a packet that would start before the clock's zero: that
///   one packet is left out; every later packet's time is exact.
/// - ``extradata``: the AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1; `11 90` for AAC-LC, 48 kHz, stereo,
///   then FFmpeg's sync extension `56 E5 00`, §1.6.5.1: "no SBR"), from `AV_CODEC_FLAG_GLOBAL_HEADER`: the
///   FLV AAC sequence header's body and the MP4 `esds`'s.
/// - Latency: one AAC frame stays inside the encoder (its lookahead); the next input lets it out.
///
/// Used from one thread at a time (the audio encoding serializes it).
public final class AACEncoder: AudioEncoder {
    /// Samples per channel in an AAC-LC frame.
    public static let frameSamples = 1024
    /// The default bitrate, bits per second (stereo speech and music well past transparent for screen sound).
    public static let defaultBitsPerSecond = 128_000
    /// The bitrates accepted, bits per second.
    public static let bitrateRange = 16_000...512_000

    public let codec = AudioCodec.aac
    public let extradata: [UInt8]
    /// The bitrate it was opened at, bits per second.
    public let bitsPerSecond: Int
    /// Samples per channel by which the encoder's output lags its input (`initial_padding`; 1024).
    public let primingSamples: Int

    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// Interleaved stereo samples not yet in an AAC frame (fewer than 1024 per channel after each call).
    private var pending: [Int16] = []
    /// The sample clock of `pending[0]`; nil before the first input.
    private var pendingStart: UInt64?
    /// Recent inputs' (sampleTime, captureMicros), to give each output its capture time.
    private var stamps: [(sample: UInt64, micros: UInt64)] = []

    /// Opens the encoder.
    /// - Parameter bitsPerSecond: the target (ABR), within ``bitrateRange``.
    /// - Throws: ``AACError/unavailable(_:)`` (no `aac` encoder in this libavcodec, a bitrate out of range),
    ///   ``AACError/library(what:code:)`` (`avcodec_open2` or a buffer refused).
    public init(bitsPerSecond: Int = defaultBitsPerSecond) throws(AACError) {
        guard Self.bitrateRange.contains(bitsPerSecond) else {
            throw .unavailable("an AAC bitrate of \(bitsPerSecond) bit/s: it must be 16000-512000")
        }
        guard let encoder = avcodec_find_encoder_by_name("aac") else { throw .unavailable("libavcodec has no native aac encoder") }
        guard let context = avcodec_alloc_context3(encoder) else { throw .library(what: "avcodec_alloc_context3", code: -12) }
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            var c: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&c)
            throw .library(what: "av_frame_alloc", code: -12)
        }
        self.context = context
        self.frame = frame
        self.packet = packet
        self.bitsPerSecond = bitsPerSecond
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(AudioFrame.sampleRate)
        _ = cavcodec_set_channels(&context.pointee.ch_layout, Int32(AudioFrame.channelCount))
        context.pointee.bit_rate = Int64(bitsPerSecond)
        context.pointee.profile = FF_PROFILE_AAC_LOW
        context.pointee.time_base = AVRational(num: 1, den: Int32(AudioFrame.sampleRate))
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        var code = avcodec_open2(context, encoder, nil)
        guard code >= 0 else { throw .library(what: "avcodec_open2 (aac)", code: code) }
        guard Int(context.pointee.frame_size) == Self.frameSamples else {
            throw .unavailable("the aac encoder takes \(context.pointee.frame_size) samples a frame, not 1024")
        }
        primingSamples = Int(context.pointee.initial_padding)
        extradata = context.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(context.pointee.extradata_size))) } ?? []
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.nb_samples = Int32(Self.frameSamples)
        frame.pointee.sample_rate = Int32(AudioFrame.sampleRate)
        _ = cavcodec_set_channels(&frame.pointee.ch_layout, Int32(AudioFrame.channelCount))
        code = av_frame_get_buffer(frame, 0)
        guard code >= 0 else { throw .library(what: "av_frame_get_buffer", code: code) }
        pending.reserveCapacity((Self.frameSamples + AudioFrame.samplesPerChannel) * AudioFrame.channelCount)
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// Takes 10 ms; returns the AAC frames completed (none or one, now and then two), in order. A frame whose
    /// ``AudioFrame/sampleTime`` does not follow the one before starts the buffering over at its time (the
    /// samples waiting are dropped).
    /// - Throws: ``AACError/library(what:code:)`` when libavcodec refuses a frame.
    public func encode(_ input: AudioFrame) throws(AACError) -> [EncodedAudioFrame] {
        let channels = AudioFrame.channelCount
        if let start = pendingStart, start + UInt64(pending.count / channels) != input.sampleTime {
            pending.removeAll(keepingCapacity: true)
            pendingStart = nil
        }
        if pendingStart == nil { pendingStart = input.sampleTime }
        pending.append(contentsOf: input.samples)
        stamps.append((input.sampleTime, input.captureMicros))
        if stamps.count > 8 { stamps.removeFirst(stamps.count - 8) }
        var out: [EncodedAudioFrame] = []
        let values = Self.frameSamples * channels
        while pending.count >= values {
            var code = av_frame_make_writable(frame)
            guard code >= 0 else { throw .library(what: "av_frame_make_writable", code: code) }
            frame.pointee.extended_data[0]!.withMemoryRebound(to: Float.self, capacity: Self.frameSamples) { left in
                frame.pointee.extended_data[1]!.withMemoryRebound(to: Float.self, capacity: Self.frameSamples) { right in
                    pending.withUnsafeBufferPointer { p in
                        for i in 0..<Self.frameSamples {
                            left[i] = Float(p[2 * i]) / 32768
                            right[i] = Float(p[2 * i + 1]) / 32768
                        }
                    }
                }
            }
            frame.pointee.pts = Int64(pendingStart!)
            pending.removeFirst(values)
            pendingStart! += UInt64(Self.frameSamples)
            code = avcodec_send_frame(context, frame)
            guard code >= 0 else { throw .library(what: "avcodec_send_frame", code: code) }
            try receive(into: &out)
        }
        return out
    }

    private func receive(into out: inout [EncodedAudioFrame]) throws(AACError) {
        while true {
            let code = avcodec_receive_packet(context, packet)
            if code == cavcodec_averror_eagain() || code == cavcodec_averror_eof() { return }
            guard code >= 0 else { throw .library(what: "avcodec_receive_packet", code: code) }
            defer { av_packet_unref(packet) }
            let pts = packet.pointee.pts
            guard pts >= 0 else { continue }  // the priming packet, before the sample clock's zero
            let data = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            out.append(EncodedAudioFrame(
                codec: .aac, data: data, sampleTime: UInt64(pts), durationSamples: Self.frameSamples, captureMicros: captureMicros(of: UInt64(pts))))
        }
    }

    /// The capture time of sample `sample`, from the latest input at or before it (else the oldest kept).
    private func captureMicros(of sample: UInt64) -> UInt64 {
        guard let anchor = stamps.last(where: { $0.sample <= sample }) ?? stamps.first else { return 0 }
        let offset = (Int64(clamping: sample) &- Int64(clamping: anchor.sample)) / Int64(AudioFrame.sampleRate) * 1_000_000
            + (Int64(clamping: sample) &- Int64(clamping: anchor.sample)) % Int64(AudioFrame.sampleRate) * 1_000_000 / Int64(AudioFrame.sampleRate)
        return UInt64(max(0, Int64(clamping: anchor.micros) &+ offset))
    }
}
