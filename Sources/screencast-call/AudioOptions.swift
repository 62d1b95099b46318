import AudioSource
import Call
import ScreencastSupport

/// `--audio-test-tone HZ`: what the call's audio source plays while no agent sends sound (issues 28, 29).
enum AudioOptions {
    static let valueOptions: Set<String> = ["audio-test-tone"]

    /// The tone's level, dBFS RMS (a sine's peak is 3 dB above).
    static let toneLevelDBFS = -20.0

    static let usage = """

        Sound (the call's one audio source: the agent's sound while it sends some):
          --audio-test-tone HZ     play a sine of HZ, 20-20000, at -20 dBFS while no agent sends sound
                                   (default: silence); RTMP and MP4 carry it as AAC-LC
        """

    /// The audio source's configuration.
    /// - Throws: ``UsageError`` (exit 64) for a frequency out of range or not a number.
    static func configuration(_ arguments: CommandLineArguments) throws(UsageError) -> AudioSourceConfiguration {
        var audio = AudioSourceConfiguration()
        let range = AudioSourceConfiguration.toneFrequencyRange
        if let hz = try arguments.double("audio-test-tone", in: range.lowerBound...range.upperBound) {
            audio.idle = .tone(frequencyHz: hz, levelDBFS: toneLevelDBFS)
        }
        return audio
    }
}
