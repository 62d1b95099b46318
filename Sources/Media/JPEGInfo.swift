/// Chroma subsampling of a JPEG, as libturbojpeg reports it (`TJSAMP_*`).
public enum JPEGSubsampling: Sendable, Equatable, CustomStringConvertible {
    /// 4:4:4, full-resolution chroma.
    case yuv444
    /// 4:2:2, chroma halved horizontally.
    case yuv422
    /// 4:2:0, chroma halved in both directions (the same layout as I420; decoded without conversion).
    case yuv420
    /// Grayscale, one component.
    case gray
    /// 4:4:0, chroma halved vertically.
    case yuv440
    /// 4:1:1, chroma quartered horizontally.
    case yuv411

    /// Chroma samples per luma sample, as (horizontal, vertical) divisors: 4:2:2 is (2, 1).
    /// Grayscale reports (1, 1) but has no chroma planes.
    public var chromaFactors: (horizontal: Int, vertical: Int) {
        switch self {
        case .yuv444, .gray: (1, 1)
        case .yuv422: (2, 1)
        case .yuv420: (2, 2)
        case .yuv440: (1, 2)
        case .yuv411: (4, 1)
        }
    }

    public var description: String {
        switch self {
        case .yuv444: "4:4:4"
        case .yuv422: "4:2:2"
        case .yuv420: "4:2:0"
        case .gray: "gray"
        case .yuv440: "4:4:0"
        case .yuv411: "4:1:1"
        }
    }
}

/// Colour space of a JPEG, as libturbojpeg reports it (`TJCS_*`).
public enum JPEGColorspace: Sendable, Equatable, CustomStringConvertible {
    case rgb
    case yCbCr
    case gray
    case cmyk
    case ycck

    public var description: String {
        switch self {
        case .rgb: "RGB"
        case .yCbCr: "YCbCr"
        case .gray: "gray"
        case .cmyk: "CMYK"
        case .ycck: "YCCK"
        }
    }
}

/// What a JPEG header says: picture size, chroma subsampling and colour space.
public struct JPEGInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var subsampling: JPEGSubsampling
    public var colorspace: JPEGColorspace

    public init(width: Int, height: Int, subsampling: JPEGSubsampling, colorspace: JPEGColorspace) {
        self.width = width
        self.height = height
        self.subsampling = subsampling
        self.colorspace = colorspace
    }
}

extension JPEGInfo {
    /// The fewest bytes a JPEG of this size can have: in Huffman coding (baseline or progressive,
    /// ITU-T T.81 §F.1.2) every 8×8 luma block costs at least one bit for its DC coefficient, so a body
    /// shorter than ⌈blocks / 8⌉ bytes cannot hold the picture its header claims. Checked before the planes
    /// are allocated, so a forged 16384×16384 header in a tiny body costs nothing.
    public var minimumEncodedBytes: Int {
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        return (blocks + 7) / 8
    }
}
