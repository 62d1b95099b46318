public import FrameSocket
public import Media

/// What currently feeds the shared video source.
public enum SourceKind: String, Sendable, Equatable, CustomStringConvertible {
    /// Frames from the agent over the Unix socket.
    case screen
    /// The built-in moving test pattern.
    case testPattern = "testpattern"
    /// A `.frames` dump played from a file.
    case file

    public var description: String { rawValue }
}

/// The size and rate of the test pattern.
public struct TestPatternSettings: Sendable, Equatable {
    /// Width in pixels, 16…7680.
    public var width: Int
    /// Height in pixels, 16…4320.
    public var height: Int
    /// Frames per second, 0.1…240.
    public var framesPerSecond: Double

    /// 1280×720 at 30 fps unless told otherwise.
    public init(width: Int = 1280, height: Int = 720, framesPerSecond: Double = 30) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
    }
}

/// What feeds the source while no agent is connected (`--source screen|testpattern|file:PATH`).
public enum FallbackSource: Sendable, Equatable {
    /// Nothing: only the screen feeds the source (`--source screen`); while no agent is connected the
    /// last picture stays (repeated about once a second).
    case none
    /// The test pattern.
    case testPattern(TestPatternSettings)
    /// A `.frames` dump, paced by its `Buffer-Timestamp`s (1/30 s apart without them), looping when `loop`.
    case file(path: String, loop: Bool)

    /// The kind it produces, nil for `.none`.
    public var kind: SourceKind? {
        switch self {
        case .none: nil
        case .testPattern: .testPattern
        case .file: .file
        }
    }
}

/// How a static picture is refined: after the last new frame, re-encode it under falling quantizer
/// ceilings, then repeat it (at the best of them) every `repeatMicros`.
///
/// With the defaults a static screen gives six re-encodes at +0.2 s, +0.35 s, … +0.95 s, then one frame
/// a second. Six, because libvpx's screen-content rate control lowers an interframe's quantizer by at
/// most 12 of its 128 steps per frame: that many re-encodes take a coarse picture (q≈47) to the best
/// (q 12), measured at 480×272 and 1280×720 (≈32.5 → 43 dB).
public struct IdleRefinementPolicy: Sendable, Equatable {
    /// Quantizer ceilings (0…63) of the successive refinement encodes, falling; empty turns refinement
    /// off (the repeats still happen unless `repeatMicros` is nil).
    public var quantizerCeilings: [Int]
    /// From the last new frame to the first refinement, µs.
    public var firstDelayMicros: UInt64
    /// Between refinement encodes, µs.
    public var stepMicros: UInt64
    /// Between repeats once refined, µs; nil: no repeats.
    public var repeatMicros: UInt64?

    /// See the properties; the defaults are `standard`'s.
    public init(
        quantizerCeilings: [Int] = [40, 32, 24, 18, 14, 12], firstDelayMicros: UInt64 = 200_000,
        stepMicros: UInt64 = 150_000, repeatMicros: UInt64? = 1_000_000
    ) {
        self.quantizerCeilings = quantizerCeilings
        self.firstDelayMicros = firstDelayMicros
        self.stepMicros = stepMicros
        self.repeatMicros = repeatMicros
    }

    /// The defaults above.
    public static let standard = IdleRefinementPolicy()
    /// Neither refinement nor repeats: a static picture is encoded once.
    public static let off = IdleRefinementPolicy(quantizerCeilings: [], repeatMicros: nil)
}

/// Everything a `VideoSource` is set up with. `validate()` checks the ranges.
public struct VideoSourceConfiguration: Sendable {
    /// The agent's socket; nil runs without a screen capturer (tests, `--source file` pipelines).
    public var socketPath: SocketPath?
    /// What feeds the source while no agent is connected.
    public var fallback: FallbackSource
    /// Fixed CBR target in kbps (`--bitrate`), 1…1 000 000; nil: `VP8EncoderSettings.defaultBitrateKbps`
    /// of the current size and `maxFramesPerSecond`, recomputed at each size change.
    public var bitrateKbps: Int?
    /// Upper bound of encoded new frames per second (`--max-fps`), 0.1…240; frames arriving faster wait
    /// in the one-frame slot and are replaced by newer ones (counted stale).
    public var maxFramesPerSecond: Double
    /// The rate policy lowers the frame rate down to this before it raises the quantizer floor
    /// (`--min-fps`), 0.1…240 (default 5; `ScreenRatePolicy`); above `maxFramesPerSecond` it is that.
    public var minFramesPerSecond: Double
    /// A keyframe at least this often, seconds (`--keyframe-interval`); nil: only on request.
    public var keyframeIntervalSeconds: Double?
    /// Keyframe requests closer than this to the previous keyframe are coalesced into one at the end of
    /// the spacing, seconds (default 1: a storm of PLIs under loss costs at most one keyframe a second).
    public var keyframeMinSpacingSeconds: Double
    /// libvpx `cpu-used`, -16…-1 (default -6).
    public var cpuUsed: Int
    /// libvpx's best quantizer, 0…63 (default 12; `--min-q`).
    public var minQuantizer: Int
    /// libvpx's worst quantizer, `minQuantizer`…63 (default 56; `--max-q`).
    public var maxQuantizer: Int
    /// libvpx encoder threads (default 1).
    public var encoderThreads: Int
    /// Idle refinement and repeats.
    public var refinement: IdleRefinementPolicy
    /// A connected sender that completes no frame for this long is dropped, seconds (default 5).
    public var watchdogSeconds: Double
    /// When true, the source ends after the first agent's stream ends (or after one pass of the file
    /// fallback): it does not fall back, it reports `.sourceEnded`, and the caller stops it.
    public var endWhenSourceEnds: Bool
    /// The largest JPEG dimension accepted (the wire limit).
    public var maximumDimension: Int
    /// The most pixels a JPEG may have to be decoded (`--max-decode-pixels`, 1…16384²; default
    /// 7680×4320, 33 MP). Checked on the JPEG's header before anything is allocated for its picture:
    /// larger ones are dropped (`DropReason.tooLarge`, logged once per refused size). One valid
    /// 16383×16383 JPEG would otherwise cost 400 MB to decode and gigabytes to encode.
    public var maximumDecodePixels: Int
    /// The largest picture the encoder gets (`--max-encode-size`, default 3840x2160): larger pictures
    /// are downscaled with libyuv (box filter) before they are encoded, keeping their aspect ratio, to
    /// even sizes (`PictureSize.downscaled(toFit:)`; the limit is orientation-free, so a portrait
    /// picture fits it turned). Each side 16…16384.
    public var maximumEncodeSize: PictureSize
    /// `--scale-down on|off` (default on): when the target cannot carry the picture at the lowest frame rate, the
    /// encoded size steps down (¾, ½ of each side, never below 360 lines) and back up as the target allows
    /// (``ScreenRatePolicy``); off keeps the full size whatever the target (text at 1–5 fps, then a raised
    /// quantizer floor).
    public var scaleDownWhenStarved = true

    /// The default decode budget: 7680×4320 pixels (8K UHD).
    public static let defaultMaximumDecodePixels = 7680 * 4320
    /// The default encode limit: 3840x2160 (4K UHD).
    public static let defaultMaximumEncodeSize = PictureSize(width: 3840, height: 2160)

    /// See the properties for each value's meaning, range and default.
    public init(
        socketPath: SocketPath?, fallback: FallbackSource = .none, bitrateKbps: Int? = nil,
        maxFramesPerSecond: Double = 30, minFramesPerSecond: Double = 5, keyframeIntervalSeconds: Double? = nil,
        keyframeMinSpacingSeconds: Double = 1, cpuUsed: Int = -6, minQuantizer: Int = 12,
        maxQuantizer: Int = 56, encoderThreads: Int = 1, refinement: IdleRefinementPolicy = .standard,
        watchdogSeconds: Double = 5, endWhenSourceEnds: Bool = false, maximumDimension: Int = 16384,
        maximumDecodePixels: Int = VideoSourceConfiguration.defaultMaximumDecodePixels,
        maximumEncodeSize: PictureSize = VideoSourceConfiguration.defaultMaximumEncodeSize
    ) {
        self.socketPath = socketPath
        self.fallback = fallback
        self.bitrateKbps = bitrateKbps
        self.maxFramesPerSecond = maxFramesPerSecond
        self.minFramesPerSecond = minFramesPerSecond
        self.keyframeIntervalSeconds = keyframeIntervalSeconds
        self.keyframeMinSpacingSeconds = keyframeMinSpacingSeconds
        self.cpuUsed = cpuUsed
        self.minQuantizer = minQuantizer
        self.maxQuantizer = maxQuantizer
        self.encoderThreads = encoderThreads
        self.refinement = refinement
        self.watchdogSeconds = watchdogSeconds
        self.endWhenSourceEnds = endWhenSourceEnds
        self.maximumDimension = maximumDimension
        self.maximumDecodePixels = maximumDecodePixels
        self.maximumEncodeSize = maximumEncodeSize
    }

    /// Encoder settings for a `width`×`height` picture.
    public func encoderSettings(width: Int, height: Int) -> VP8EncoderSettings {
        VP8EncoderSettings(
            width: width, height: height,
            bitrateKbps: bitrateKbps
                ?? VP8EncoderSettings.defaultBitrateKbps(width: width, height: height, framesPerSecond: maxFramesPerSecond),
            cpuUsed: cpuUsed, minQuantizer: minQuantizer, maxQuantizer: maxQuantizer, threads: encoderThreads,
            rateControl: .screen(framesPerSecond: maxFramesPerSecond))
    }

    /// - Throws: `VideoSourceError.invalidConfiguration` naming the first value out of range.
    public func validate() throws(VideoSourceError) {
        func check(_ ok: Bool, _ message: @autoclosure () -> String) throws(VideoSourceError) {
            if !ok { throw .invalidConfiguration(message()) }
        }
        try check(bitrateKbps.map { (1...1_000_000).contains($0) } ?? true, "bitrate must be 1...1000000 kbps")
        try check((0.1...240).contains(maxFramesPerSecond), "max fps must be 0.1...240")
        try check((0.1...240).contains(minFramesPerSecond), "min fps must be 0.1...240")
        try check(keyframeIntervalSeconds.map { $0 > 0 && $0 <= 3600 } ?? true, "keyframe interval must be 0...3600 s")
        try check((0...60).contains(keyframeMinSpacingSeconds), "keyframe spacing must be 0...60 s")
        try check(watchdogSeconds > 0 && watchdogSeconds <= 3600, "watchdog must be 0...3600 s")
        try check((1...16384 * 16384).contains(maximumDecodePixels), "max decode pixels must be 1...268435456")
        try check((16...16384).contains(maximumEncodeSize.width) && (16...16384).contains(maximumEncodeSize.height),
                  "max encode size must be 16x16...16384x16384")
        try check(refinement.quantizerCeilings.allSatisfy { (0...63).contains($0) }, "refinement quantizers must be 0...63")
        if case .testPattern(let pattern) = fallback {
            try check((16...7680).contains(pattern.width) && (16...4320).contains(pattern.height),
                      "test pattern size must be 16x16...7680x4320")
            try check((0.1...240).contains(pattern.framesPerSecond), "test pattern fps must be 0.1...240")
        }
        do {
            try encoderSettings(width: 64, height: 64).validate()
        } catch {
            throw .invalidConfiguration("\(error)")
        }
    }
}
