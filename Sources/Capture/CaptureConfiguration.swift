import Media

/// Which part of the X screen to capture.
public enum CaptureTarget: Sendable, Equatable {
    /// The whole root window (the default); follows screen resizes.
    case root
    /// One RandR monitor (as `xrandr --listmonitors` lists them); re-resolved after every RandR change
    /// (a resize, a CRTC or output change, a monitor defined or deleted with `xrandr --setmonitor` /
    /// `--delmonitor`). One that disappears while captured is waited for up to
    /// ``CaptureConfiguration/monitorAbsenceLimitSeconds`` (a redefinition deletes it first).
    case monitor(MonitorSelector)
    /// A fixed rectangle of the root window; clipped to the screen after a resize.
    case region(CaptureRect)
}

/// How a monitor is named on the command line: by its RandR name or by its index in the list.
public enum MonitorSelector: Sendable, Equatable, CustomStringConvertible {
    /// The monitor's name (an atom such as `DP-1`, `VNC-0` or one given to `xrandr --setmonitor`).
    case name(String)
    /// The 0-based index in the server's monitor list (the number `xrandr --listmonitors` prints).
    case index(Int)

    /// All digits means an index, anything else a name.
    public init(parsing text: String) {
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(text) {
            self = .index(index)
        } else {
            self = .name(text)
        }
    }

    public var description: String {
        switch self {
        case .name(let name): name
        case .index(let index): "#\(index)"
        }
    }
}

/// The size of the frames sent, relative to the captured area.
public enum OutputSize: Sendable, Equatable {
    /// As captured.
    case native
    /// Each side times the factor, rounded (0.5 halves, as the iOS sender does); (0, 1].
    case scale(Double)
    /// Shrunk (aspect kept, never enlarged) to fit within this many pixels.
    case fit(width: Int, height: Int)

    /// The frame size for a captured area of `width`×`height`.
    public func frameSize(width: Int, height: Int) -> (width: Int, height: Int) {
        switch self {
        case .native: (width, height)
        case .scale(let factor): BGRXScaler.scaledSize(width: width, height: height, scale: factor)
        case .fit(let maxWidth, let maxHeight):
            BGRXScaler.fittedSize(width: width, height: height, maxWidth: maxWidth, maxHeight: maxHeight)
        }
    }

    /// Parses `WxH` (the `--max-size` syntax), each side 1…16384; nil when it does not match.
    public static func parseSize(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let width = Int(parts[0]), let height = Int(parts[1]),
            (1...16_384).contains(width), (1...16_384).contains(height)
        else { return nil }
        return (width, height)
    }
}

/// What the frames' bodies are.
public enum CaptureFormat: String, Sendable, Equatable, CaseIterable {
    /// JPEG (JFIF: BT.601 full range), as iOS senders write: the default, and the only format other readers know.
    case jpeg
    /// Raw planar I420 in BT.601 limited range (what VP8 carries, so the call encodes it as it is),
    /// converted with libyuv `ARGBToI420` (``Media/BGRXToYUV``) and sent with `Buffer-Color-Range: limited`:
    /// for a call on the same machine, ≈3.1 MB a frame at 1080p (≈93 MB/s at 30 fps).
    case i420
    /// The BGRX picture in memory shared with the call (`Buffer-Format: BGRX-SHM`, Protocol/frame-wire.md
    /// §2.8): copied once from the X server's segment into one of two slots of a memfd the call maps; only
    /// the header travels on the socket. The call converts it once to BT.601 limited range.
    case shm

    /// The YCbCr range of the bodies: full for JPEG (JFIF), limited for I420 (and what the call makes of shm).
    public var colorRange: YCbCrRange { self == .jpeg ? .full : .limited }
}

/// The one higher-quality refresh sent once the screen has been static for a while, so text ends up sharp.
public struct PaintOver: Sendable, Equatable {
    /// JPEG quality of the refresh, 1…100 (default 95).
    public var quality: Int
    /// Chroma subsampling of the refresh (default 4:4:4: no chroma smear on coloured text).
    public var subsampling: JPEGSubsampling
    /// Seconds without any change before the refresh is sent (default 1).
    public var delaySeconds: Double

    public init(quality: Int = 95, subsampling: JPEGSubsampling = .yuv444, delaySeconds: Double = 1) {
        self.quality = quality
        self.subsampling = subsampling
        self.delaySeconds = delaySeconds
    }
}

/// Everything that shapes a capture: the display, what to capture, rate, size and JPEG settings.
public struct CaptureConfiguration: Sendable, Equatable {
    /// The X display name (`:0`, `host:1.0`); nil means `$DISPLAY`.
    public var display: String?
    /// What to capture (default: the whole root window).
    public var target: CaptureTarget = .root
    /// One X window instead of `target` (`--window`): its Composite pixmap, at its first size on the wire
    /// (``WindowCaptureLoop``). Nil: `target`.
    public var window: WindowSelector?
    /// Upper bound on frames per second for changing content, 0.1…240 (default 30). Fewer frames are sent
    /// when the screen changes less often.
    public var maxFramesPerSecond: Double = 30
    /// Frame size (default: as captured).
    public var outputSize: OutputSize = .native
    /// The frames' body format (default JPEG). With ``CaptureFormat/i420`` quality, subsampling and the
    /// paint-over do not apply (a raw frame cannot get sharper).
    public var format: CaptureFormat = .jpeg
    /// JPEG quality, 1…100 (default 80).
    public var quality: Int = 80
    /// Chroma subsampling of ordinary frames (default 4:2:0; `.yuv444` for crisp text).
    public var subsampling: JPEGSubsampling = .yuv420
    /// The refresh after the screen settles; nil for none.
    public var paintOver: PaintOver? = PaintOver()
    /// With no change, the last frame is sent again after this many seconds (default 2), so a reader can
    /// tell a static screen from a stalled pipeline. 0.05…3600.
    public var keepaliveSeconds: Double = 2
    /// Composite the pointer's cursor (XFixes) into frames (default true).
    public var drawsCursor = true
    /// Use MIT-SHM when the server offers it (default true); false forces plain `GetImage`.
    public var usesSharedMemory = true

    /// How long a captured monitor may be missing from the server's list before the capture fails with
    /// ``CaptureError/noSuchMonitor(_:available:)``, seconds: `xrandr` redefines a monitor by deleting it
    /// and defining it again, two requests that may reach us apart (or come from two runs). Meanwhile
    /// no new frame is captured; keepalives of the last one go on.
    public static let monitorAbsenceLimitSeconds = 2.0

    /// The defaults described on each property.
    public init() {}

    /// Checks every value against its documented range.
    /// - Throws: ``CaptureError/invalidConfiguration(_:)`` naming the first bad value.
    public func validate() throws(CaptureError) {
        guard (0.1...240).contains(maxFramesPerSecond) else {
            throw .invalidConfiguration("frames per second must be 0.1...240, got \(maxFramesPerSecond)")
        }
        guard (1...100).contains(quality) else { throw .invalidConfiguration("quality must be 1...100, got \(quality)") }
        guard (0.05...3600).contains(keepaliveSeconds) else {
            throw .invalidConfiguration("keepalive must be 0.05...3600 s, got \(keepaliveSeconds)")
        }
        switch outputSize {
        case .native: break
        case .scale(let factor):
            guard factor > 0, factor <= 1 else { throw .invalidConfiguration("scale must be in (0, 1], got \(factor)") }
        case .fit(let width, let height):
            guard width >= 1, height >= 1 else { throw .invalidConfiguration("maximum size \(width)x\(height) is empty") }
        }
        if let paintOver {
            guard (1...100).contains(paintOver.quality) else {
                throw .invalidConfiguration("paint-over quality must be 1...100, got \(paintOver.quality)")
            }
            guard paintOver.delaySeconds >= 0, paintOver.delaySeconds <= 3600 else {
                throw .invalidConfiguration("paint-over delay must be 0...3600 s, got \(paintOver.delaySeconds)")
            }
        }
        if case .region(let rect) = target, rect.isEmpty || rect.x < 0 || rect.y < 0 {
            throw .invalidConfiguration("region \(rect) is empty or starts left of or above the screen")
        }
    }

    /// The paint-over that actually improves on ordinary frames: nil when there is none, when ordinary
    /// frames are already at least as good (quality and chroma), or for raw I420 frames.
    var effectivePaintOver: PaintOver? {
        guard let paintOver, format == .jpeg else { return nil }
        let betterChroma = subsampling != .yuv444 && paintOver.subsampling == .yuv444
        return paintOver.quality > quality || betterChroma ? paintOver : nil
    }
}
