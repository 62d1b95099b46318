/// A picture in BGRX: 4 bytes per pixel in memory order blue, green, red, unused — what an X server with a
/// 24-bit TrueColor root hands out (`ZPixmap`, 32 bits per pixel, least significant byte first), and what
/// libyuv calls "ARGB" (a little-endian `0xXXRRGGBB` word per pixel).
///
/// ```
///  row 0:  B G R X  B G R X  …  (width × 4 bytes)  [padding up to stride]
///  row 1:  …
/// ```
///
/// The fourth byte is ignored by every consumer here (JPEG encoding, scaling). Rows are `stride` bytes
/// apart (`stride ≥ width × 4`); images made by this type have `stride == width × 4`. A value type with
/// copy-on-write storage.
public struct BGRXImage: Sendable, Equatable {
    /// Width in pixels.
    public private(set) var width: Int
    /// Height in pixels.
    public private(set) var height: Int
    /// Bytes from one row to the next (`width × 4` for images made here).
    public private(set) var stride: Int
    /// `stride × height` bytes of pixels.
    public private(set) var bytes: [UInt8]

    /// Bytes per pixel (always 4).
    public static let bytesPerPixel = 4

    /// An empty 0×0 image (to be sized on first use).
    public init() {
        width = 0
        height = 0
        stride = 0
        bytes = []
    }

    /// A `width`×`height` image filled with black (all bytes 0).
    /// - Precondition: `width` and `height` are not negative.
    public init(width: Int, height: Int) {
        self.init()
        resize(width: width, height: height)
    }

    /// Wraps existing pixels.
    /// - Throws: `MediaError.invalidArgument` when a size is negative, `stride < width × 4`, or
    ///   `bytes.count != stride × height`.
    public init(width: Int, height: Int, stride: Int, bytes: [UInt8]) throws(MediaError) {
        guard width >= 0, height >= 0, stride >= width * Self.bytesPerPixel else {
            throw .invalidArgument("BGRX \(width)x\(height) with stride \(stride) is not a valid layout")
        }
        guard bytes.count == stride * height else {
            throw .invalidArgument("BGRX \(width)x\(height) stride \(stride) needs \(stride * height) bytes, got \(bytes.count)")
        }
        self.width = width
        self.height = height
        self.stride = stride
        self.bytes = bytes
    }

    /// Makes this a tightly packed `width`×`height` image. Keeps the allocation when it is large enough;
    /// the contents are unspecified afterwards unless the size did not change.
    /// - Precondition: `width` and `height` are not negative.
    public mutating func resize(width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "BGRXImage size must not be negative")
        let stride = width * Self.bytesPerPixel
        if width == self.width, height == self.height, stride == self.stride { return }
        let count = stride * height
        if bytes.count != count {
            if count <= bytes.capacity {
                bytes.removeAll(keepingCapacity: true)
                bytes.append(contentsOf: repeatElement(0, count: count))
            } else {
                bytes = [UInt8](repeating: 0, count: count)
            }
        }
        self.width = width
        self.height = height
        self.stride = stride
    }

    /// The pixel at (`x`, `y`) as (red, green, blue). For tests and small fix-ups, not for loops over
    /// whole images.
    /// - Precondition: the point lies inside the image.
    public func rgb(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
        let offset = y * stride + x * Self.bytesPerPixel
        return (bytes[offset + 2], bytes[offset + 1], bytes[offset])
    }

    /// Calls `body` with the pixel bytes (`stride × height`).
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try bytes.withUnsafeBufferPointer { (buffer) throws(E) -> R in try body(UnsafeRawBufferPointer(buffer)) }
    }

    /// Calls `body` with writable pixel bytes (`stride × height`).
    public mutating func withUnsafeMutableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try bytes.withUnsafeMutableBufferPointer { (buffer) throws(E) -> R in
            try body(UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// A read-only view of the pixels, valid only inside `body`.
    public func withPixels<R, E: Error>(_ body: (BGRXPixels) throws(E) -> R) throws(E) -> R {
        let (width, height, stride) = (width, height, stride)
        return try withUnsafeBytes { (raw) throws(E) -> R in
            try body(BGRXPixels(base: raw, width: width, height: height, stride: stride))
        }
    }
}

/// A borrowed view of BGRX pixels somewhere in memory (an `BGRXImage`, or a shared-memory segment the X
/// server wrote into): `height` rows of `stride` bytes, each starting with `width × 4` bytes of pixels.
///
/// Valid only while the memory it points to is; never store it.
public struct BGRXPixels {
    /// The first byte of row 0.
    public let base: UnsafeRawBufferPointer
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes from one row to the next.
    public let stride: Int

    /// Describes `height` rows of `stride` bytes at `base`.
    /// - Precondition: `stride ≥ width × 4` and `base` holds at least `stride × (height − 1) + width × 4`
    ///   bytes (when the image is not empty).
    public init(base: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) {
        precondition(width >= 0 && height >= 0 && stride >= width * BGRXImage.bytesPerPixel, "bad BGRX layout")
        precondition(width == 0 || height == 0 || base.count >= stride * (height - 1) + width * BGRXImage.bytesPerPixel,
                     "BGRX buffer too small")
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
    }
}
