/// A picture in I420: 8-bit YCbCr 4:2:0, three planes, in the colour space ``colorSpace`` names (BT.601,
/// limited or full range: see ``YCbCrColorSpace``).
///
/// All three planes live in one contiguous allocation, `bytes`, back to back, rows without padding:
///
/// ```
///  offset                                   plane  size (samples)                 stride
///  0                                        Y      width × height                 yStride  = width
///  width·height                             U (Cb) chromaWidth × chromaHeight     uvStride = chromaWidth
///  width·height + chromaWidth·chromaHeight  V (Cr) chromaWidth × chromaHeight     uvStride = chromaWidth
///
///  chromaWidth = (width + 1) / 2,  chromaHeight = (height + 1) / 2
/// ```
///
/// Odd sizes are allowed: the last chroma column (row) then covers one luma column (row).
/// Code that reads planes should use the strides, so that row padding can be introduced later without
/// changing callers. A value type: copies share storage until one of them is written (copy on write).
/// Two buffers are equal when their size, colour space and bytes are.
public struct I420Buffer: Sendable, Equatable {
    /// Width of the picture (the Y plane) in pixels.
    public private(set) var width: Int
    /// Height of the picture (the Y plane) in pixels.
    public private(set) var height: Int
    /// The three planes, Y then U then V, in the layout described above.
    public internal(set) var bytes: [UInt8]
    /// What the samples mean: BT.601, limited or full range. Whoever writes the planes sets it (every
    /// producer in this module does: decoders, conversions, rotation and scaling keep their source's);
    /// ``resize(width:height:)`` keeps it.
    public var colorSpace: YCbCrColorSpace

    /// An empty 0×0 buffer, for a producer to size (and label) on first use. Labelled BT.601 limited range
    /// until then.
    public init() {
        width = 0
        height = 0
        bytes = []
        colorSpace = .bt601Limited
    }

    /// A `width`×`height` buffer in `colorSpace`, filled with its black (Y 16 in limited range, 0 in full
    /// range; U and V 128).
    /// - Precondition: `width` and `height` are not negative.
    public init(width: Int, height: Int, colorSpace: YCbCrColorSpace) {
        precondition(width >= 0 && height >= 0, "I420Buffer size must not be negative")
        self.init()
        self.colorSpace = colorSpace
        resize(width: width, height: height)
        fillBlack()
    }

    /// Wraps existing I420 bytes laid out as described above, whose samples are in `colorSpace` (no copy:
    /// the buffer shares `bytes`' storage until one of them is written).
    /// - Throws: `MediaError.invalidArgument` if a size is negative or `bytes.count` does not match.
    public init(width: Int, height: Int, bytes: [UInt8], colorSpace: YCbCrColorSpace) throws(MediaError) {
        guard width >= 0, height >= 0 else {
            throw .invalidArgument("I420Buffer size \(width)x\(height) is negative")
        }
        let expected = I420Buffer.byteCount(width: width, height: height)
        guard bytes.count == expected else {
            throw .invalidArgument("I420 \(width)x\(height) needs \(expected) bytes, got \(bytes.count)")
        }
        self.width = width
        self.height = height
        self.bytes = bytes
        self.colorSpace = colorSpace
    }

    /// Total bytes of a tightly packed I420 picture of this size.
    public static func byteCount(width: Int, height: Int) -> Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }

    /// Width of the U and V planes: `(width + 1) / 2`.
    public var chromaWidth: Int { (width + 1) / 2 }
    /// Height of the U and V planes: `(height + 1) / 2`.
    public var chromaHeight: Int { (height + 1) / 2 }
    /// Bytes from one Y row to the next.
    public var yStride: Int { width }
    /// Bytes from one U (or V) row to the next.
    public var uvStride: Int { chromaWidth }

    /// Offset of the Y plane in `bytes` (always 0).
    public var yOffset: Int { 0 }
    /// Offset of the U plane in `bytes`.
    public var uOffset: Int { yStride * height }
    /// Offset of the V plane in `bytes`.
    public var vOffset: Int { uOffset + uvStride * chromaHeight }

    /// The Y plane (a view of `bytes`, no copy).
    public var y: ArraySlice<UInt8> { bytes[yOffset..<uOffset] }
    /// The U (Cb) plane (a view of `bytes`, no copy).
    public var u: ArraySlice<UInt8> { bytes[uOffset..<vOffset] }
    /// The V (Cr) plane (a view of `bytes`, no copy).
    public var v: ArraySlice<UInt8> { bytes[vOffset..<bytes.count] }

    /// Makes this a `width`×`height` buffer. Keeps the allocation when the byte count stays the same
    /// (so a decoder reusing one buffer allocates nothing in steady state, and a 90° rotation of the
    /// size reuses it too); contents are unspecified afterwards unless the size did not change.
    /// - Precondition: `width` and `height` are not negative.
    public mutating func resize(width: Int, height: Int) {
        precondition(width >= 0 && height >= 0, "I420Buffer size must not be negative")
        if width == self.width, height == self.height, bytes.count == I420Buffer.byteCount(width: width, height: height) {
            return
        }
        let count = I420Buffer.byteCount(width: width, height: height)
        if bytes.count != count {
            if count <= bytes.capacity, count <= bytes.count {
                bytes.removeLast(bytes.count - count)  // shrinking keeps the allocation and touches nothing
            } else {
                // A new allocation, zero-filled by the allocator in one pass (never byte by byte: a 16384²
                // picture took seconds that way in a debug build).
                bytes = [UInt8](repeating: 0, count: count)
            }
        }
        self.width = width
        self.height = height
    }

    /// Sets every pixel to black in ``colorSpace`` (Y 16 in limited range, 0 in full range; U and V 128).
    public mutating func fillBlack() {
        let split = uOffset
        let black = colorSpace.blackLuma
        bytes.withUnsafeMutableBufferPointer { all in
            UnsafeMutableBufferPointer(rebasing: all[0..<split]).update(repeating: black)
            UnsafeMutableBufferPointer(rebasing: all[split...]).update(repeating: 128)
        }
    }

    /// Calls `body` with read-only pointers to the Y, U and V planes (each exactly its plane's bytes).
    public func withUnsafePlanes<R, E: Error>(
        _ body: (_ y: UnsafeBufferPointer<UInt8>, _ u: UnsafeBufferPointer<UInt8>, _ v: UnsafeBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        let (uStart, vStart) = (uOffset, vOffset)
        return try bytes.withUnsafeBufferPointer { (all) throws(E) -> R in
            try body(
                UnsafeBufferPointer(rebasing: all[0..<uStart]),
                UnsafeBufferPointer(rebasing: all[uStart..<vStart]),
                UnsafeBufferPointer(rebasing: all[vStart...])
            )
        }
    }

    /// Calls `body` with writable pointers to the Y, U and V planes (each exactly its plane's bytes).
    public mutating func withUnsafeMutablePlanes<R, E: Error>(
        _ body: (_ y: UnsafeMutableBufferPointer<UInt8>, _ u: UnsafeMutableBufferPointer<UInt8>, _ v: UnsafeMutableBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        let (uStart, vStart) = (uOffset, vOffset)
        return try bytes.withUnsafeMutableBufferPointer { (all) throws(E) -> R in
            try body(
                UnsafeMutableBufferPointer(rebasing: all[0..<uStart]),
                UnsafeMutableBufferPointer(rebasing: all[uStart..<vStart]),
                UnsafeMutableBufferPointer(rebasing: all[vStart...])
            )
        }
    }
}
