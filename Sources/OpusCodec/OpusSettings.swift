/// How the call encodes its sound in Opus (RFC 6716): what `screencast-call --audio-bitrate`/`--audio-frame-ms`
/// set.
public struct OpusSettings: Sendable, Equatable {
    /// How much sound one Opus packet carries (RFC 6716 §2.1.4 allows 2.5–60 ms; the call offers two).
    public enum FrameDuration: Int, Sendable, Equatable, CaseIterable {
        /// 10 ms: one ``AudioFrame`` a packet; lower latency, ~2× the packet overhead.
        case ms10 = 10
        /// 20 ms: two ``AudioFrame``s a packet (WebRTC's usual `ptime`).
        case ms20 = 20

        /// Samples per channel in a packet, at 48 kHz (480 or 960).
        public var samplesPerChannel: Int { rawValue * 48 }
    }

    /// The bitrates Opus takes, kbps (RFC 6716 §2.1.1: 6 to 510 kb/s).
    public static let bitrateRangeKbps = 6...510
    /// The default, kbps: 96 for stereo, because system sound is music as much as speech (RFC 7587 §3.1.1
    /// puts fullband stereo music at 64–128 kb/s).
    public static let defaultBitrateKbps = 96
    /// The loss the encoder plans its in-band FEC for, percent (`OPUS_SET_PACKET_LOSS_PERC`; FEC does nothing at 0).
    public static let defaultExpectedLossPercent = 5
    /// The loss percentages accepted (`OPUS_SET_PACKET_LOSS_PERC`).
    public static let expectedLossRangePercent = 0...100

    /// Target bitrate, kbps, within ``bitrateRangeKbps`` (VBR: a frame may take more or less).
    public var bitrateKbps: Int
    /// 10 or 20 ms a packet.
    public var frameDuration: FrameDuration
    /// Discontinuous transmission (RFC 7587 §3.1.3): while the sound is silent the encoder makes packets of
    /// 1–2 bytes (``EncodedAudioFrame/isSilence``), which the RTP sender need not send, and a comfort-noise
    /// update every 400 ms.
    public var dtx: Bool
    /// In-band forward error correction (RFC 6716 §2.1.7, `useinbandfec` of RFC 7587 §6.1): each packet carries
    /// a low-rate copy of the one before; the SILK and hybrid modes use it (speech at lower rates).
    public var inbandFEC: Bool
    /// See ``defaultExpectedLossPercent``.
    public var expectedLossPercent: Int

    /// The call's default: 96 kbps, 20 ms, DTX and in-band FEC on.
    public init(
        bitrateKbps: Int = Self.defaultBitrateKbps, frameDuration: FrameDuration = .ms20, dtx: Bool = true, inbandFEC: Bool = true,
        expectedLossPercent: Int = Self.defaultExpectedLossPercent
    ) {
        self.bitrateKbps = bitrateKbps
        self.frameDuration = frameDuration
        self.dtx = dtx
        self.inbandFEC = inbandFEC
        self.expectedLossPercent = expectedLossPercent
    }
}

/// What went wrong in the Opus encoder (one error enum for the module); each carries libopus's code and text
/// (`opus_strerror`).
public enum OpusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A setting outside its range (``OpusSettings/bitrateRangeKbps``, ``OpusSettings/expectedLossRangePercent``).
    case settingOutOfRange(name: String, value: Int, range: ClosedRange<Int>)
    /// `opus_encoder_create` failed.
    case create(code: Int32, message: String)
    /// An `opus_encoder_ctl` request failed.
    case control(request: String, code: Int32, message: String)
    /// `opus_encode` failed.
    case encode(code: Int32, message: String)

    public var description: String {
        switch self {
        case .settingOutOfRange(let name, let value, let range):
            "Opus \(name) \(value) is out of range \(range.lowerBound)-\(range.upperBound)"
        case .create(let code, let message): "opus_encoder_create failed (\(code)): \(message)"
        case .control(let request, let code, let message): "opus_encoder_ctl \(request) failed (\(code)): \(message)"
        case .encode(let code, let message): "opus_encode failed (\(code)): \(message)"
        }
    }
}
