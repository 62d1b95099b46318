public import AudioSource
import COpus

/// The call's Opus encoder (libopus, RFC 6716): 48 kHz stereo ``AudioFrame``s (10 ms, S16 interleaved) in,
/// one Opus packet per 10 or 20 ms out (``OpusSettings/frameDuration``), `OPUS_APPLICATION_AUDIO`, VBR at
/// ``OpusSettings/bitrateKbps``, with DTX and in-band FEC as set. The one owner of its `OpusEncoder *`
/// (`opus_encoder_create` … `opus_encoder_destroy`). Used from one thread at a time (``AudioEncoder``).
///
/// A packet's ``EncodedAudioFrame/sampleTime`` is its first 10-ms frame's: RFC 7587 §4.1's RTP timestamp (48 kHz
/// whatever the audio bandwidth). A 20-ms packet pairs frames whose sample times follow each other; a gap
/// between them (the source restarted its clock) drops the lone first half rather than join two moments.
public final class OpusEncoder: AudioEncoder {
    /// The largest packet libopus is given room for, bytes (its documentation's recommended 4000; a 20-ms
    /// packet is at most 1275 bytes, RFC 6716 §3.4).
    public static let maxPacketBytes = 4000

    public let codec = AudioCodec.opus
    public let settings: OpusSettings
    /// Samples per channel of lookahead (the decoder's pre-skip, RFC 7845 §4.2; 312 at 48 kHz in libopus 1.3).
    public let lookahead: Int
    private let handle: OpaquePointer
    /// The packet's PCM being gathered: `samplesPerChannel` × 2 values, reused.
    private var pcm: [Int16]
    private var gathered = 0
    private var firstSampleTime: UInt64 = 0
    private var firstCaptureMicros: UInt64 = 0
    private var packet: [UInt8]

    /// - Throws: ``OpusError/settingOutOfRange(name:value:range:)``, ``OpusError/create(code:message:)``,
    ///   ``OpusError/control(request:code:message:)``.
    public init(settings: OpusSettings = OpusSettings()) throws(OpusError) {
        guard OpusSettings.bitrateRangeKbps.contains(settings.bitrateKbps) else {
            throw .settingOutOfRange(name: "bitrate (kbps)", value: settings.bitrateKbps, range: OpusSettings.bitrateRangeKbps)
        }
        guard OpusSettings.expectedLossRangePercent.contains(settings.expectedLossPercent) else {
            throw .settingOutOfRange(
                name: "expected loss (%)", value: settings.expectedLossPercent, range: OpusSettings.expectedLossRangePercent)
        }
        var error: Int32 = 0
        guard let handle = opus_encoder_create(
            Int32(AudioFrame.sampleRate), Int32(AudioFrame.channelCount), copus_application_audio(), &error), error == copus_ok()
        else { throw .create(code: error, message: Self.message(error)) }
        self.handle = handle
        self.settings = settings
        pcm = [Int16](repeating: 0, count: settings.frameDuration.samplesPerChannel * AudioFrame.channelCount)
        packet = [UInt8](repeating: 0, count: Self.maxPacketBytes)
        var lookahead: Int32 = 0
        do {
            try Self.check("OPUS_SET_BITRATE", copus_set_bitrate(handle, Int32(settings.bitrateKbps * 1000)))
            try Self.check("OPUS_SET_DTX", copus_set_dtx(handle, settings.dtx ? 1 : 0))
            try Self.check("OPUS_SET_INBAND_FEC", copus_set_inband_fec(handle, settings.inbandFEC ? 1 : 0))
            try Self.check("OPUS_SET_PACKET_LOSS_PERC", copus_set_packet_loss_perc(handle, Int32(settings.expectedLossPercent)))
            try Self.check("OPUS_GET_LOOKAHEAD", copus_get_lookahead(handle, &lookahead))
        } catch {
            opus_encoder_destroy(handle)
            throw error
        }
        self.lookahead = Int(lookahead)
    }

    deinit { opus_encoder_destroy(handle) }

    /// The `OpusHead` of RFC 7845 §5.1 (19 bytes, little-endian): version 1, 2 channels, the pre-skip
    /// (``lookahead``), 48 000 Hz input, gain 0, channel mapping family 0.
    public var extradata: [UInt8] {
        var head = Array("OpusHead".utf8)
        head += [1, UInt8(AudioFrame.channelCount), UInt8(lookahead & 0xFF), UInt8(lookahead >> 8)]
        let rate = UInt32(AudioFrame.sampleRate)
        head += [UInt8(rate & 0xFF), UInt8((rate >> 8) & 0xFF), UInt8((rate >> 16) & 0xFF), UInt8(rate >> 24)]
        head += [0, 0, 0]
        return head
    }

    /// Gathers `frame`; returns the packet it completes (none for the first half of a 20-ms packet).
    /// - Throws: ``OpusError/encode(code:message:)`` (the gathered sound is dropped; the next frame starts anew).
    public func encode(_ frame: AudioFrame) throws(OpusError) -> [EncodedAudioFrame] {
        let perFrame = AudioFrame.samplesPerChannel * AudioFrame.channelCount
        if gathered > 0, frame.sampleTime != firstSampleTime + UInt64(gathered / AudioFrame.channelCount) {
            gathered = 0  // not the continuation of the gathered half: start the packet with this frame
        }
        if gathered == 0 {
            firstSampleTime = frame.sampleTime
            firstCaptureMicros = frame.captureMicros
        }
        pcm.withUnsafeMutableBufferPointer { dst in
            frame.samples.withUnsafeBufferPointer { src in
                (dst.baseAddress! + gathered).update(from: src.baseAddress!, count: perFrame)
            }
        }
        gathered += perFrame
        guard gathered == pcm.count else { return [] }
        gathered = 0
        let samplesPerChannel = settings.frameDuration.samplesPerChannel
        let bytes = pcm.withUnsafeBufferPointer { src in
            packet.withUnsafeMutableBufferPointer { dst in
                opus_encode(handle, src.baseAddress!, Int32(samplesPerChannel), dst.baseAddress!, Int32(dst.count))
            }
        }
        guard bytes > 0 else { throw .encode(code: bytes, message: Self.message(bytes)) }
        // libopus: "if the return value is 2 bytes or less, then the packet does not need to be transmitted (DTX)".
        return [EncodedAudioFrame(
            codec: .opus, data: Array(packet[0..<Int(bytes)]), sampleTime: firstSampleTime, durationSamples: samplesPerChannel,
            captureMicros: firstCaptureMicros, isSilence: settings.dtx && bytes <= 2)]
    }

    /// What libopus says it runs with (`OPUS_GET_BITRATE`, `OPUS_GET_DTX`, `OPUS_GET_INBAND_FEC`): bps and flags.
    /// - Throws: ``OpusError/control(request:code:message:)``.
    public func effectiveSettings() throws(OpusError) -> (bitrateBps: Int, dtx: Bool, inbandFEC: Bool) {
        var bitrate: Int32 = 0
        var dtx: Int32 = 0
        var fec: Int32 = 0
        try Self.check("OPUS_GET_BITRATE", copus_get_bitrate(handle, &bitrate))
        try Self.check("OPUS_GET_DTX", copus_get_dtx(handle, &dtx))
        try Self.check("OPUS_GET_INBAND_FEC", copus_get_inband_fec(handle, &fec))
        return (Int(bitrate), dtx != 0, fec != 0)
    }

    private static func check(_ request: String, _ code: Int32) throws(OpusError) {
        guard code == copus_ok() else { throw .control(request: request, code: code, message: message(code)) }
    }

    private static func message(_ code: Int32) -> String { String(cString: opus_strerror(code)) }
}
