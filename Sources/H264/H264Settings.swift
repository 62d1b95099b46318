public import Media

/// How the shared H.264 encoding is made: the rules of the live-push SDKs this project learns from, for
/// RTMP destinations and MP4 recordings alike (issue 29).
///
/// - No B-frames, x264's `zerolatency` tuning (no lookahead, no frame threads): a frame leaves the encoder
///   when it goes in.
/// - CBR: the bitrate is also the VBV's maximum rate, and the VBV holds one second of it.
/// - A keyframe (IDR) every 2 × frame rate frames, and at most every 2 s of capture time on a slow source
///   (``KeyframeCadence``); a forced IDR on request.
/// - SPS and PPS before every keyframe (Annex B), so a muxer opened later (a reconnect) takes its sequence
///   header from the next keyframe.
public struct H264Settings: Sendable, Equatable {
    /// Picture size, pixels (even).
    public var width: Int
    public var height: Int
    /// The nominal frame rate (the source's cap), frames per second.
    public var framesPerSecond: Int
    /// The CBR target, bits per second.
    public var bitsPerSecond: Int
    /// x264 preset (speed against quality per bit).
    public var preset = "veryfast"
    /// H.264 profile: `baseline` (constrained), `main` or `high`.
    public var profile = "high"
    /// Encoder threads (1: the safe choice on a small, busy machine; see docs on VP8's threads).
    public var threads = 1
    /// The pictures' range and matrix, written into the VUI so players convert as the screen meant.
    public var colorSpace = YCbCrColorSpace.bt601Limited

    public init(width: Int, height: Int, framesPerSecond: Int, bitsPerSecond: Int? = nil) {
        self.width = width
        self.height = height
        self.framesPerSecond = max(1, framesPerSecond)
        self.bitsPerSecond = bitsPerSecond ?? Self.defaultBitsPerSecond(width: width, height: height, framesPerSecond: framesPerSecond)
    }

    /// The lowest target, bits per second: 100 kbit/s.
    public static let minimumBitsPerSecond = 100_000

    /// The seed's rule: width × height × fps × 0.08 bits per second (1280×720 at 30 fps: 2.2 Mbit/s;
    /// 1920×1080 at 30 fps: 5.0 Mbit/s), at least 100 kbit/s.
    public static func defaultBitsPerSecond(width: Int, height: Int, framesPerSecond: Int) -> Int {
        max(minimumBitsPerSecond, Int((Double(width * height * max(1, framesPerSecond)) * 0.08).rounded()))
    }

    /// Frames between keyframes: 2 × fps.
    public var keyframeIntervalFrames: Int { 2 * framesPerSecond }

    /// The VBV's size, bits: one second at the target.
    public var vbvBufferBits: Int { bitsPerSecond }

    /// Checks what libx264 would refuse or misread.
    public func validate() throws(H264Error) {
        guard width >= 16, height >= 16, width % 2 == 0, height % 2 == 0, width <= 8192, height <= 8192 else {
            throw .invalidSettings("picture size \(width)x\(height) (even, 16…8192)")
        }
        guard (1...240).contains(framesPerSecond) else { throw .invalidSettings("frame rate \(framesPerSecond)") }
        guard (10_000...200_000_000).contains(bitsPerSecond) else { throw .invalidSettings("bitrate \(bitsPerSecond) bit/s") }
        guard ["baseline", "main", "high"].contains(profile) else { throw .invalidSettings("profile \(profile)") }
    }
}

/// When the next frame must be a keyframe: every ``intervalFrames`` frames, and at the latest
/// ``intervalMicros`` of capture time after the last keyframe (a still screen sends few frames, yet players
/// joining the stream and the keyframe checks of ingest servers want one every 2 s); or when asked.
/// Sans-I/O: fed with each frame's capture time, it says whether that frame is to be forced.
public struct KeyframeCadence: Sendable, Equatable {
    public let intervalFrames: Int
    public let intervalMicros: UInt64
    private var framesSinceKeyframe = 0
    private var lastKeyframeMicros: UInt64?
    private var requested = false

    public init(intervalFrames: Int, intervalMicros: UInt64 = 2_000_000) {
        self.intervalFrames = max(1, intervalFrames)
        self.intervalMicros = intervalMicros
    }

    /// A keyframe was asked for (a new destination, a reconnect): the next frame is one.
    public mutating func request() { requested = true }

    /// Whether the frame captured at `micros` is to be a keyframe; counts it as sent.
    public mutating func next(atMicros micros: UInt64) -> Bool {
        let due: Bool
        if let last = lastKeyframeMicros {
            due = requested || framesSinceKeyframe + 1 >= intervalFrames || micros >= last + intervalMicros
        } else {
            due = true
        }
        if due {
            lastKeyframeMicros = micros
            framesSinceKeyframe = 0
            requested = false
        } else {
            framesSinceKeyframe += 1
        }
        return due
    }
}
