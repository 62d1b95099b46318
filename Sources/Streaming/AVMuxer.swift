internal import CAVCodec
internal import CAVFormat
internal import CAVLog
import Glibc
import Synchronization

/// Lets a blocking libavformat call (connect, write) give up: when stopping, or when the call has taken longer
/// than its deadline (a server that stopped reading fills the socket's buffer, and a write would block for
/// ever). libavformat's protocols poll it (the interrupt callback) while they wait.
final class InterruptGate: Sendable {
    private let stopping = Atomic<Bool>(false)
    /// CLOCK_MONOTONIC µs after which the call in progress gives up; 0: none.
    private let deadline = Atomic<UInt64>(0)

    func stop() { stopping.store(true, ordering: .releasing) }
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Runs `body` with a deadline `seconds` from now.
    func within<R, E: Error>(seconds: Double, _ body: () throws(E) -> R) throws(E) -> R {
        deadline.store(MonotonicMicros.now() + UInt64(seconds * 1_000_000), ordering: .releasing)
        defer { deadline.store(0, ordering: .releasing) }
        return try body()
    }

    var shouldInterrupt: Bool {
        if isStopping { return true }
        let limit = deadline.load(ordering: .acquiring)
        return limit != 0 && MonotonicMicros.now() > limit
    }

    /// The C callback: `opaque` is an unretained pointer to the gate (the muxer holds it).
    static let callback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<InterruptGate>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt ? 1 : 0
    }
}

enum MonotonicMicros {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}

/// One libavformat output (the owner of its `AVFormatContext` and `AVIOContext`, freed in `deinit`) with one
/// video stream (H.264, or VP8 for WebM) and, when given its configuration, one sound stream (48 kHz stereo:
/// AAC-LC, or Opus for WebM): opened on a URL or file (`flv` over `rtmp://`, `mp4` or `webm` to a file), a
/// header written from the SPS and PPS (and the AudioSpecificConfig or OpusHead), then access units with their timestamps, then the trailer. Blocking: use it on
/// a thread of its own. libavformat's log goes nowhere but the last error line of the thread, which errors carry.
final class AVMuxer {
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let stream: UnsafeMutablePointer<AVStream>
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let gate: InterruptGate
    private var headerWritten = false
    /// Packets go through libavformat's interleaving queue (`av_interleaved_write_frame`) rather than straight out.
    private var interleaves = false
    private let what: String
    private let packet: UnsafeMutablePointer<AVPacket>

    private static let logOnce: Void = { cavlog_capture() }()

    /// Allocates the muxer and opens `url` (for RTMP: connects, handshakes and publishes).
    /// - Parameters:
    ///   - format: the muxer's short name (`flv`, `mp4`).
    ///   - openSeconds: how long the open may take.
    ///   - protocolOptions: options of the protocols under the URL (`avio_open2`'s dictionary; for RTMP they reach
    ///     its TCP connection: `send_buffer_size`).
    init(
        url: String, display: String, format: String, gate: InterruptGate, openSeconds: Double = 10, protocolOptions: [String: String] = [:]
    ) throws(StreamingError) {
        _ = Self.logOnce
        self.gate = gate
        what = display
        var context: UnsafeMutablePointer<AVFormatContext>?
        var code = avformat_alloc_output_context2(&context, nil, format, url)
        guard code >= 0, let context else { throw Self.error("cannot make a \(format) muxer for \(display)", code) }
        guard let stream = avformat_new_stream(context, nil), let packet = av_packet_alloc() else {
            avformat_free_context(context)
            throw .library(what: "allocating the \(format) stream", code: -12, message: "out of memory")
        }
        self.context = context
        self.stream = stream
        self.packet = packet
        cavformat_set_interrupt(context, InterruptGate.callback, Unmanaged.passUnretained(gate).toOpaque())
        var dictionary: OpaquePointer?
        for (key, value) in protocolOptions { av_dict_set(&dictionary, key, value, 0) }
        code = gate.within(seconds: openSeconds) {
            avio_open2(&context.pointee.pb, url, AVIO_FLAG_WRITE, &context.pointee.interrupt_callback, &dictionary)
        }
        av_dict_free(&dictionary)
        if code < 0 {
            let timedOut = gate.isStopping ? false : code == cavcodec_averror_exit()
            throw timedOut ? .timedOut(what: "connecting to \(display)", seconds: openSeconds) : Self.error("cannot open \(display)", code)
        }
    }

    deinit {
        if let context {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
        }
        var packet: UnsafeMutablePointer<AVPacket>? = self.packet
        av_packet_free(&packet)
    }

    /// Writes the header: the stream's size and codec (for H.264 the SPS and PPS as extradata), and with `audio`
    /// a 48 kHz stereo sound stream: AAC-LC with its AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1), or Opus
    /// with its `OpusHead` (RFC 7845 §5.1) as the Matroska CodecPrivate (Matroska codec mapping `A_OPUS`; the
    /// head's pre-skip becomes the track's CodecDelay through `initial_padding`). For FLV the metadata, the AVC
    /// and the AAC sequence header tags (FLV spec v10 §E.4.2.2/§E.4.3.1: AACPacketType 0, AVCPacketType 0), for
    /// MP4 the `ftyp` and an empty `moov` with `avcC` and `esds` (with `movflags`), for WebM the EBML header and
    /// the Tracks.
    /// `interleaved`: every packet after it goes through libavformat's interleaving (`av_interleaved_write_frame`:
    /// held until the other stream has one as late, at most `max_interleave_delta`, 10 s), so the file's blocks
    /// are in time order across the streams (sound arrives up to a packet, 20 ms, behind the picture of its
    /// time); otherwise each packet goes out as it is written (`av_write_frame`: a live destination's latency).
    /// - Throws: ``StreamingError/library(what:code:message:)`` (libavformat refused), ``StreamingError/timedOut(what:seconds:)``.
    func writeHeader(
        width: Int, height: Int, video: VideoTrack, audio: AudioTrack? = nil, interleaved: Bool = false, options: [String: String] = [:],
        seconds: Double = 10
    ) throws(StreamingError) {
        guard let context else { return }
        interleaves = interleaved
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.width = Int32(width)
        parameters.pointee.height = Int32(height)
        switch video {
        case .h264(let parameterSets):
            parameters.pointee.codec_id = AV_CODEC_ID_H264
            try Self.setExtradata(parameters, parameterSets)
        case .vp8:
            parameters.pointee.codec_id = AV_CODEC_ID_VP8
        }
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        if let audio, audioStream == nil {
            guard let made = avformat_new_stream(context, nil) else {
                throw .library(what: "allocating the audio stream", code: -12, message: "out of memory")
            }
            let p = made.pointee.codecpar!
            p.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            p.pointee.sample_rate = Int32(Self.audioRate)
            _ = cavcodec_set_channels(&p.pointee.ch_layout, 2)
            switch audio {
            case .aac(let config):
                p.pointee.codec_id = AV_CODEC_ID_AAC
                p.pointee.profile = FF_PROFILE_AAC_LOW
                p.pointee.frame_size = 1024
                try Self.setExtradata(p, config)
            case .opus(let head):
                p.pointee.codec_id = AV_CODEC_ID_OPUS
                p.pointee.initial_padding = Int32(AudioTrack.opusPreSkip(head))
                try Self.setExtradata(p, head)
            }
            made.pointee.time_base = AVRational(num: 1, den: Int32(Self.audioRate))
            audioStream = made
        }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        let code = gate.within(seconds: seconds) { avformat_write_header(context, &dictionary) }
        av_dict_free(&dictionary)
        guard code >= 0 else { throw error("writing the header to \(what)", code, seconds: seconds) }
        headerWritten = true
    }

    /// The video stream's codec: H.264 with its SPS and PPS (Annex B), or VP8 (RFC 6386 frames; no extradata).
    enum VideoTrack {
        case h264(parameterSets: [UInt8])
        case vp8
    }

    /// The audio stream's codec and its configuration for the container.
    enum AudioTrack: Equatable {
        /// AAC-LC: the AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1).
        case aac(config: [UInt8])
        /// Opus: the `OpusHead` (RFC 7845 §5.1, 19 bytes for channel mapping family 0).
        case opus(head: [UInt8])

        /// The pre-skip of an `OpusHead` (RFC 7845 §5.1: bytes 10–11, little-endian, 48 kHz samples); 0 when
        /// the head is too short to hold it.
        static func opusPreSkip(_ head: [UInt8]) -> Int {
            guard head.count >= 12 else { return 0 }
            return Int(head[10]) | Int(head[11]) << 8
        }
    }

    /// The audio stream's sample rate, Hz (its time base is one sample).
    static let audioRate = 48_000

    /// Whether the header declared an audio stream.
    var hasAudio: Bool { audioStream != nil }

    private static func setExtradata(_ parameters: UnsafeMutablePointer<AVCodecParameters>, _ bytes: [UInt8]) throws(StreamingError) {
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        guard let extradata = av_mallocz(bytes.count + padding)?.assumingMemoryBound(to: UInt8.self) else {
            throw .library(what: "extradata", code: -12, message: "out of memory")
        }
        extradata.update(from: bytes, count: bytes.count)
        parameters.pointee.extradata = extradata
        parameters.pointee.extradata_size = Int32(bytes.count)
    }

    /// Writes one access unit (Annex B; the muxer converts to length prefixes) at `millis` (the stream's time,
    /// ms from the session's start), within `seconds`.
    func write(_ bytes: [UInt8], millis: Int64, isKeyframe: Bool, seconds: Double) throws(StreamingError) {
        try write(bytes, stream: stream, time: millis, unit: AVRational(num: 1, den: 1000), duration: 0, isKeyframe: isKeyframe, seconds: seconds)
    }

    /// Writes one sound frame at `ticks` (48 kHz samples from the session's start), `durationSamples` long
    /// (1024 for AAC-LC, 960 for 20 ms of Opus), within `seconds`: a raw AAC access unit (no ADTS header) or an
    /// Opus packet (RFC 6716 §3; a 1–2-byte DTX packet too: it keeps the track's time). Nothing without an
    /// audio stream.
    func writeAudio(_ bytes: [UInt8], ticks: Int64, durationSamples: Int, seconds: Double) throws(StreamingError) {
        guard let audioStream else { return }
        try write(
            bytes, stream: audioStream, time: ticks, unit: AVRational(num: 1, den: Int32(Self.audioRate)), duration: Int64(durationSamples),
            isKeyframe: true, seconds: seconds)
    }

    private func write(
        _ bytes: [UInt8], stream: UnsafeMutablePointer<AVStream>, time: Int64, unit: AVRational, duration: Int64, isKeyframe: Bool, seconds: Double
    ) throws(StreamingError) {
        guard let context, headerWritten else { throw .noParameterSets }
        let code: Int32 = bytes.withUnsafeBufferPointer { buffer in
            guard av_new_packet(packet, Int32(buffer.count)) >= 0 else { return cavcodec_averror(12) }
            packet.pointee.data.update(from: buffer.baseAddress!, count: buffer.count)
            let timeBase = stream.pointee.time_base
            let ts = av_rescale_q(time, unit, timeBase)
            packet.pointee.pts = ts
            packet.pointee.dts = ts
            packet.pointee.duration = av_rescale_q(duration, unit, timeBase)
            packet.pointee.stream_index = stream.pointee.index
            packet.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0
            defer { av_packet_unref(packet) }
            // av_interleaved_write_frame takes the packet's reference (leaves it blank): the unref is then a no-op.
            return gate.within(seconds: seconds) { interleaves ? av_interleaved_write_frame(context, packet) : av_write_frame(context, packet) }
        }
        guard code >= 0 else { throw error("writing to \(what)", code, seconds: seconds) }
    }

    /// Writes the trailer (MP4: the last fragment and the index) and closes the output. Idempotent.
    func finish(seconds: Double = 5) throws(StreamingError) {
        guard let context else { return }
        defer {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
            self.context = nil
        }
        if headerWritten {
            let code = gate.within(seconds: seconds) { av_write_trailer(context) }
            guard code >= 0 else { throw error("finishing \(what)", code, seconds: seconds) }
        }
    }

    private func error(_ what: String, _ code: Int32, seconds: Double) -> StreamingError {
        if code == cavcodec_averror_exit(), !gate.isStopping { return .timedOut(what: what, seconds: seconds) }
        return Self.error(what, code)
    }

    /// libavformat's error text for `code`, with the last line it logged on this thread when there is one.
    static func error(_ what: String, _ code: Int32) -> StreamingError {
        var text = [CChar](repeating: 0, count: 256)
        av_strerror(code, &text, text.count)
        var logged = [CChar](repeating: 0, count: 512)
        cavlog_take_error(&logged, logged.count)
        let message = cText(text)
        let line = cText(logged)
        return .library(what: what, code: code, message: line.isEmpty || line == message ? message : "\(message); \(line)")
    }
}

/// A NUL-terminated C string in `buffer` as a String.
func cText(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
