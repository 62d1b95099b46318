internal import CYUV

/// A clockwise rotation by a multiple of 90°, applied to a picture before it is encoded.
///
/// The same angles as `FrameWire.Rotation` (which maps the wire's `Buffer-Orientation` to them); `Media`
/// keeps its own type so it depends on no wire format. Convert with `PictureRotation(degrees:)`.
public enum PictureRotation: Int, Sendable, Equatable, Hashable, CaseIterable, CustomStringConvertible {
    case none = 0
    case clockwise90 = 90
    case clockwise180 = 180
    case clockwise270 = 270

    /// The rotation for `degrees` (0, 90, 180 or 270; any other value, such as -90 or 45, gives nil).
    public init?(degrees: Int) {
        self.init(rawValue: degrees)
    }

    /// The angle in degrees: 0, 90, 180 or 270.
    public var degrees: Int { rawValue }

    /// True for 90° and 270°: the picture's width and height trade places.
    public var swapsDimensions: Bool { self == .clockwise90 || self == .clockwise270 }

    /// The size of a `width`×`height` picture after this rotation.
    public func rotatedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsDimensions ? (height, width) : (width, height)
    }

    public var description: String { "\(rawValue)°" }

    var libyuvMode: RotationMode {
        switch self {
        case .none: kRotate0
        case .clockwise90: kRotate90
        case .clockwise180: kRotate180
        case .clockwise270: kRotate270
        }
    }
}

extension I420Buffer {
    /// Writes this picture, rotated clockwise by `rotation`, into `destination` (libyuv `I420Rotate`;
    /// `.none` copies). `destination` takes the rotated size and this picture's colour space (its allocation is kept when the byte count
    /// matches, which a 90° turn of the same picture always does), so a stream of frames rotated into one
    /// buffer allocates nothing after the first.
    ///
    /// Odd sizes work: the last chroma column (row) covers one luma column (row) before and after.
    /// - Throws: `MediaError.invalidArgument` for an empty picture, `.libyuv` if libyuv refuses.
    public func rotated(by rotation: PictureRotation, into destination: inout I420Buffer) throws(MediaError) {
        guard width > 0, height > 0 else {
            throw .invalidArgument("cannot rotate an empty \(width)x\(height) picture")
        }
        let size = rotation.rotatedSize(width: width, height: height)
        destination.resize(width: size.width, height: size.height)
        destination.colorSpace = colorSpace
        let (srcW, srcH) = (Int32(width), Int32(height))
        let (srcY, srcUV) = (Int32(yStride), Int32(uvStride))
        let (dstY, dstUV) = (Int32(destination.yStride), Int32(destination.uvStride))
        let status = withUnsafePlanes { sy, su, sv in
            destination.withUnsafeMutablePlanes { dy, du, dv in
                I420Rotate(
                    sy.baseAddress, srcY, su.baseAddress, srcUV, sv.baseAddress, srcUV,
                    dy.baseAddress, dstY, du.baseAddress, dstUV, dv.baseAddress, dstUV,
                    srcW, srcH, rotation.libyuvMode)
            }
        }
        guard status == 0 else {
            throw .libyuv("I420Rotate \(width)x\(height) by \(rotation) returned \(status)")
        }
    }
}
