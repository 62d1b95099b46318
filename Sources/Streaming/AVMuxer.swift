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
/// H.264 video stream: opened on a URL or file (`flv` over `rtmp://`, `mp4` to a file), a header written from
/// the SPS and PPS, then access units in Annex B with their timestamps, then the trailer. Blocking: use it on
/// a thread of its own. libavformat's log goes nowhere but the last error line of the thread, which errors carry.
final class AVMuxer {
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let gate: InterruptGate
    private var headerWritten = false
    private let what: String
    private let packet: UnsafeMutablePointer<AVPacket>

    private static let logOnce: Void = { cavlog_capture() }()

    /// Allocates the muxer and opens `url` (for RTMP: connects, handshakes and publishes).
    /// - Parameters:
    ///   - format: the muxer's short name (`flv`, `mp4`).
    ///   - openSeconds: how long the open may take.
    init(url: String, display: String, format: String, gate: InterruptGate, openSeconds: Double = 10) throws(StreamingError) {
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
        code = gate.within(seconds: openSeconds) {
            avio_open2(&context.pointee.pb, url, AVIO_FLAG_WRITE, &context.pointee.interrupt_callback, nil)
        }
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

    /// Writes the header: the stream's size and `parameterSets` (SPS and PPS in Annex B) as extradata; for FLV
    /// the metadata and AVC sequence header tags, for MP4 the `ftyp` and an empty `moov` (with `movflags`).
    func writeHeader(width: Int, height: Int, parameterSets: [UInt8], options: [String: String] = [:], seconds: Double = 10) throws(StreamingError) {
        guard let context else { return }
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(width)
        parameters.pointee.height = Int32(height)
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        guard let extradata = av_mallocz(parameterSets.count + padding)?.assumingMemoryBound(to: UInt8.self) else {
            throw .library(what: "extradata", code: -12, message: "out of memory")
        }
        extradata.update(from: parameterSets, count: parameterSets.count)
        parameters.pointee.extradata = extradata
        parameters.pointee.extradata_size = Int32(parameterSets.count)
        stream.pointee.time_base = AVRational(num: 1, den: 1000)
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        let code = gate.within(seconds: seconds) { avformat_write_header(context, &dictionary) }
        av_dict_free(&dictionary)
        guard code >= 0 else { throw error("writing the header to \(what)", code, seconds: seconds) }
        headerWritten = true
    }

    /// Writes one access unit (Annex B; the muxer converts to length prefixes) at `millis` (the stream's time,
    /// ms from the session's start), within `seconds`.
    func write(_ bytes: [UInt8], millis: Int64, isKeyframe: Bool, seconds: Double) throws(StreamingError) {
        guard let context, headerWritten else { throw .noParameterSets }
        let code: Int32 = bytes.withUnsafeBufferPointer { buffer in
            guard av_new_packet(packet, Int32(buffer.count)) >= 0 else { return cavcodec_averror(12) }
            packet.pointee.data.update(from: buffer.baseAddress!, count: buffer.count)
            let timeBase = stream.pointee.time_base
            let ts = av_rescale_q(millis, AVRational(num: 1, den: 1000), timeBase)
            packet.pointee.pts = ts
            packet.pointee.dts = ts
            packet.pointee.stream_index = 0
            packet.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0
            defer { av_packet_unref(packet) }
            return gate.within(seconds: seconds) { av_write_frame(context, packet) }
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
