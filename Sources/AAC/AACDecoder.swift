internal import CAVCodec

/// FFmpeg's native AAC decoder (libavcodec `aac`, `avcodec_send_packet`/`avcodec_receive_frame`), the owner of
/// its `AVCodecContext`: raw AAC access units (as ``AACEncoder`` makes them) back to 48 kHz stereo S16
/// interleaved samples. What checks an encoding (the tests) reads it with; one thread at a time.
public final class AACDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>

    /// Opens the decoder on `extradata` (the AudioSpecificConfig, ISO/IEC 14496-3 §1.6.2.1).
    /// - Throws: ``AACError``.
    public init(extradata: [UInt8]) throws(AACError) {
        guard let decoder = avcodec_find_decoder(AV_CODEC_ID_AAC) else { throw .unavailable("libavcodec has no aac decoder") }
        guard let context = avcodec_alloc_context3(decoder), let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw .library(what: "avcodec_alloc_context3", code: -12)
        }
        self.context = context
        self.frame = frame
        self.packet = packet
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        guard let buffer = av_mallocz(extradata.count + padding)?.assumingMemoryBound(to: UInt8.self) else {
            throw .library(what: "av_mallocz", code: -12)
        }
        buffer.update(from: extradata, count: extradata.count)
        context.pointee.extradata = buffer
        context.pointee.extradata_size = Int32(extradata.count)
        let code = avcodec_open2(context, decoder, nil)
        guard code >= 0 else { throw .library(what: "avcodec_open2 (aac decoder)", code: code) }
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// Decodes one access unit; returns its samples, stereo S16 interleaved (float output clipped to ±1).
    /// - Throws: ``AACError/library(what:code:)`` for a unit the decoder refuses.
    public func decode(_ unit: [UInt8]) throws(AACError) -> [Int16] {
        var code = av_new_packet(packet, Int32(unit.count))
        guard code >= 0 else { throw .library(what: "av_new_packet", code: code) }
        unit.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: unit.count) }
        code = avcodec_send_packet(context, packet)
        av_packet_unref(packet)
        guard code >= 0 else { throw .library(what: "avcodec_send_packet", code: code) }
        var samples: [Int16] = []
        while true {
            code = avcodec_receive_frame(context, frame)
            if code == cavcodec_averror_eagain() || code == cavcodec_averror_eof() { break }
            guard code >= 0 else { throw .library(what: "avcodec_receive_frame", code: code) }
            let count = Int(frame.pointee.nb_samples)
            let channels = Int(frame.pointee.ch_layout.nb_channels)
            guard frame.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue, channels >= 1 else {
                av_frame_unref(frame)
                throw .unavailable("the aac decoder gave sample format \(frame.pointee.format)")
            }
            for i in 0..<count {
                for c in 0..<2 {
                    let plane = frame.pointee.extended_data[min(c, channels - 1)]!
                    let value = plane.withMemoryRebound(to: Float.self, capacity: count) { $0[i] }
                    samples.append(Int16(max(-32768, min(32767, (value * 32768).rounded()))))
                }
            }
            av_frame_unref(frame)
        }
        return samples
    }
}
