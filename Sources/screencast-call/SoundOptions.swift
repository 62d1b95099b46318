import AudioSource
import OpusCodec
import ScreencastSupport

/// `--audio-bitrate KBPS [--audio-frame-ms 10|20] [--audio-test-tone HZ]`: the call's sound (issue 28).
enum SoundOptions {
    static let valueOptions: Set<String> = ["audio-bitrate", "audio-frame-ms", "audio-test-tone"]
    /// The test tone's level, dBFS RMS (a sine peaking at -17 dBFS: clearly heard, never clipped).
    static let testToneLevelDBFS = -20.0

    static let usage = """

        Sound (the agent's --audio; Opus to viewers, with DTX and in-band FEC):
          --audio-bitrate KBPS     the Opus target, 6-510 (default 96: stereo music and speech)
          --audio-frame-ms MS      Opus packet duration, 10 or 20 (default 20)
          --audio-test-tone HZ     play a sine of HZ (20-20000) at -20 dBFS while no agent sends sound
                                   (default: silence)
        """

    /// The sound part of the call's configuration: the audio source's idle sound and the Opus settings.
    /// - Throws: ``UsageError`` (exit 64): a number out of range, a frame duration other than 10 or 20.
    static func settings(_ arguments: CommandLineArguments) throws(UsageError) -> (audio: AudioSourceConfiguration, opus: OpusSettings) {
        var call = (audio: AudioSourceConfiguration(), opus: OpusSettings())
        call.opus.bitrateKbps = try arguments.int("audio-bitrate", in: OpusSettings.bitrateRangeKbps) ?? OpusSettings.defaultBitrateKbps
        if let ms = try arguments.int("audio-frame-ms", in: 10...20) {
            guard let duration = OpusSettings.FrameDuration(rawValue: ms) else {
                throw UsageError("--audio-frame-ms must be 10 or 20, not \(ms)")
            }
            call.opus.frameDuration = duration
        }
        if let hz = try arguments.double("audio-test-tone", in: AudioSourceConfiguration.toneFrequencyRange) {
            call.audio.idle = .tone(frequencyHz: hz, levelDBFS: testToneLevelDBFS)
        }
        return call
    }
}
