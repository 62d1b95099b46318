/// How the call's shared audio source behaves.
public struct AudioSourceConfiguration: Sendable, Equatable {
    /// What the source plays while no agent sends sound.
    public enum Idle: Sendable, Equatable {
        /// Digital silence (Opus DTX then sends almost nothing).
        case silence
        /// A sine tone: tests and `tools/demo` (so a first run shows that sound works).
        /// - Parameters: frequencyHz: 20…20 000 Hz; levelDBFS: its RMS level, −60…−3 dBFS (a sine's peak is
        ///   3 dB above its RMS).
        case tone(frequencyHz: Double, levelDBFS: Double)
    }

    /// The tone frequencies accepted, Hz.
    public static let toneFrequencyRange = 20.0...20_000.0
    /// The tone levels accepted, dBFS RMS.
    public static let toneLevelRange = -60.0...(-3.0)
    /// How long without the agent's sound before the idle content takes over, µs: 100 ms (the agent sends
    /// every 10 ms; a longer pause means it stopped sending).
    public static let defaultScreenHoldMicros: UInt64 = 100_000
    /// How far the agent's timestamps may run from the source's sample clock before the source re-aligns
    /// (drops the overlap or fills the gap with silence), µs: 40 ms.
    public static let defaultMaxSlipMicros: UInt64 = 40_000

    /// What plays while no agent sends sound.
    public var idle: Idle
    /// See ``defaultScreenHoldMicros``.
    public var screenHoldMicros: UInt64
    /// See ``defaultMaxSlipMicros``.
    public var maxSlipMicros: UInt64

    /// Silence when idle, with the default hold and slip.
    public init(
        idle: Idle = .silence, screenHoldMicros: UInt64 = Self.defaultScreenHoldMicros,
        maxSlipMicros: UInt64 = Self.defaultMaxSlipMicros
    ) {
        self.idle = idle
        self.screenHoldMicros = screenHoldMicros
        self.maxSlipMicros = maxSlipMicros
    }
}

/// What went wrong with the audio source's input (one error enum for the module).
public enum AudioSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sound message in a shape the call does not take: it takes 48 kHz with 1 or 2 channels.
    case unsupportedFormat(rate: Int, channels: Int)
    /// A tone outside ``AudioSourceConfiguration/toneFrequencyRange`` or ``AudioSourceConfiguration/toneLevelRange``.
    case toneOutOfRange(frequencyHz: Double, levelDBFS: Double)

    public var description: String {
        switch self {
        case .unsupportedFormat(let rate, let channels):
            "sound at \(rate) Hz with \(channels) channels: the call takes 48000 Hz, 1 or 2 channels"
        case .toneOutOfRange(let f, let l):
            "test tone \(f) Hz at \(l) dBFS: the frequency must be 20-20000 Hz and the level -60 to -3 dBFS"
        }
    }
}
