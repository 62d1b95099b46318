internal import CYUV

/// A picture size in pixels, `WxH` in options and logs.
public struct PictureSize: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Width, pixels.
    public var width: Int
    /// Height, pixels.
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The largest side `init(parsing:)` accepts (so that `pixels` cannot overflow); callers apply their own,
    /// smaller limits on top.
    public static let maximumParsedSide = 1 << 20

    /// Parses `WxH`: two runs of ASCII digits (no sign, no spaces), each 1…``maximumParsedSide``; nil for
    /// anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Self.side(parts[0]), let height = Self.side(parts[1]) else { return nil }
        self.init(width: width, height: height)
    }

    /// A decimal side, 1…``maximumParsedSide``, digits only.
    private static func side(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 8, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let value = Int(text), (1...maximumParsedSide).contains(value) else { return nil }
        return value
    }

    /// Width × height.
    public var pixels: Int { width * height }

    public var description: String { "\(width)x\(height)" }

    /// The size this picture is downscaled to so that it fits `limit`, or nil when it already fits.
    ///
    /// - The limit is orientation-free: a portrait picture is fitted into the limit turned portrait
    ///   (a 2160x3840 picture fits a 3840x2160 limit as it is), so the limit bounds the longer and the
    ///   shorter side, not the width and the height.
    /// - The aspect ratio is kept (the side that is further over the limit decides; the other one is
    ///   rounded down), and both sides of the result are even (VP8 and the I420 chroma planes like them),
    ///   at least 2.
    public func downscaled(toFit limit: PictureSize) -> PictureSize? {
        guard width > 0, height > 0, limit.width > 0, limit.height > 0 else { return nil }
        // Turn the limit so that its longer side goes with the picture's longer side.
        let turned = (width >= height) == (limit.width >= limit.height)
            ? limit : PictureSize(width: limit.height, height: limit.width)
        guard width > turned.width || height > turned.height else { return nil }
        var out: (Int, Int)
        // width / height >= turned.width / turned.height: the width is the tighter side.
        if width * turned.height >= height * turned.width {
            out = (turned.width, height * turned.width / width)
        } else {
            out = (width * turned.height / height, turned.height)
        }
        out = (max(2, out.0 & ~1), max(2, out.1 & ~1))
        return PictureSize(width: out.0, height: out.1)
    }
}

/// How `I420Buffer.scaled(to:filter:into:)` filters (libyuv's `FilterMode`).
public enum ScaleFilter: Sendable, Equatable {
    /// Averages every source pixel a destination pixel covers: the best for large reductions (text stays
    /// legible rather than aliased), and what libyuv uses by default for downscaling.
    case box
    /// Bilinear interpolation: cheaper, softer on large reductions.
    case bilinear

    var libyuvMode: FilterMode {
        switch self {
        case .box: kFilterBox
        case .bilinear: kFilterBilinear
        }
    }
}

extension I420Buffer {
    /// Writes this picture scaled to `size` into `destination` (libyuv `I420Scale`), which takes that
    /// size and this picture's colour space (its allocation is reused when the byte count matches, so a stream scaled into one buffer
    /// allocates nothing after the first frame). Up or down; odd sizes work.
    /// - Throws: `MediaError.invalidArgument` for an empty picture or size, `.libyuv` if libyuv refuses.
    public func scaled(to size: PictureSize, filter: ScaleFilter = .box, into destination: inout I420Buffer) throws(MediaError) {
        guard width > 0, height > 0 else {
            throw .invalidArgument("cannot scale an empty \(width)x\(height) picture")
        }
        guard size.width > 0, size.height > 0, size.width <= 32768, size.height <= 32768 else {
            throw .invalidArgument("cannot scale to \(size)")
        }
        destination.resize(width: size.width, height: size.height)
        destination.colorSpace = colorSpace
        let (srcY, srcUV) = (Int32(yStride), Int32(uvStride))
        let (dstY, dstUV) = (Int32(destination.yStride), Int32(destination.uvStride))
        let (srcW, srcH) = (Int32(width), Int32(height))
        let status = withUnsafePlanes { sy, su, sv in
            destination.withUnsafeMutablePlanes { dy, du, dv in
                I420Scale(
                    sy.baseAddress, srcY, su.baseAddress, srcUV, sv.baseAddress, srcUV, srcW, srcH,
                    dy.baseAddress, dstY, du.baseAddress, dstUV, dv.baseAddress, dstUV,
                    Int32(size.width), Int32(size.height), filter.libyuvMode)
            }
        }
        guard status == 0 else {
            throw .libyuv("I420Scale \(width)x\(height) to \(size) returned \(status)")
        }
    }
}
