/// The matrix that relates a picture's Y, Cb, Cr samples to R′G′B′.
///
/// Only BT.601 (ITU-R BT.601-7 §2.5.1: Kr 0.299, Kb 0.114), the one matrix JFIF (JPEG File Interchange
/// Format 1.02, §7), libyuv's I420/J420 functions and every VP8 decoder use.
public enum YCbCrMatrix: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ITU-R BT.601: Y′ = 0.299 R′ + 0.587 G′ + 0.114 B′.
    case bt601 = "BT.601"

    public var description: String { rawValue }
}

/// Which 8-bit codes a picture's Y, Cb, Cr samples span.
public enum YCbCrRange: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// "Video" (studio, MPEG) range, ITU-R BT.601-7 §2.5.3: Y 16 (black) … 235 (white), Cb and Cr
    /// 16 … 240 around 128. What a VP8 bitstream means (it has no range flag: RFC 6386 §9.2's
    /// `color_space` bit 0 is BT.601, and every decoder reads it as limited range) and so what the
    /// call's encoder takes.
    case limited
    /// JFIF's range (JPEG File Interchange Format 1.02, §7): Y, Cb and Cr all 0 … 255, black Y 0,
    /// no colour Cb = Cr = 128. What a JPEG decodes to and what libyuv's "J" functions produce.
    case full

    public var description: String { rawValue }
}

/// A picture's colour encoding: its matrix and its range. Carried by every ``I420Buffer`` so that a
/// picture says what its samples mean; the VP8 encoder takes ``bt601Limited`` only
/// (``MediaError/wrongColorSpace(expected:got:)`` otherwise) and the JPEG encoder ``bt601Full`` only.
///
/// Producers: ``JPEGDecoder`` → full; ``VP8Decoder`` → limited; ``BGRXToYUV/convertToI420(_:range:into:)``
/// → as asked (libyuv `ARGBToI420` limited, `ARGBToJ420` full); a raw I420 frame → what its
/// `Buffer-Color-Range` says. ``I420Buffer/convertToLimitedRange()`` turns full into limited.
public struct YCbCrColorSpace: Sendable, Hashable, CustomStringConvertible {
    /// The matrix (always BT.601 for now).
    public var matrix: YCbCrMatrix
    /// The range.
    public var range: YCbCrRange

    public init(matrix: YCbCrMatrix = .bt601, range: YCbCrRange) {
        self.matrix = matrix
        self.range = range
    }

    /// BT.601, limited range (Y 16…235, Cb/Cr 16…240): what VP8 carries.
    public static let bt601Limited = YCbCrColorSpace(range: .limited)
    /// BT.601, full range (all 0…255): what JFIF JPEG carries.
    public static let bt601Full = YCbCrColorSpace(range: .full)

    /// The luma code of black: 16 in limited range, 0 in full range.
    public var blackLuma: UInt8 { range == .limited ? 16 : 0 }

    /// `BT.601 limited range`, `BT.601 full range`.
    public var description: String { "\(matrix) \(range) range" }
}
