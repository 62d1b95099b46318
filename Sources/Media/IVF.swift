/// The IVF container: a 32-byte file header, then per frame a 12-byte header and the frame's bytes.
/// All integers are little-endian. (The format libvpx's `vpxenc` writes and ffmpeg's `ivf` demuxer reads.)
///
/// ```
///  file header (32 bytes)
///  0   4  "DKIF"
///  4   2  version, 0
///  6   2  header size, 32
///  8   4  codec FourCC, "VP80"
///  12  2  width, pixels
///  14  2  height, pixels
///  16  4  timebase denominator ("rate")      pts are in units of numerator/denominator seconds
///  20  4  timebase numerator ("scale")
///  24  4  length, timebase units (see below)
///  28  4  unused, 0
///
///  frame header (12 bytes), followed by `size` bytes of VP8 frame
///  0   4  size, bytes
///  4   8  pts, timebase units
/// ```
///
/// The timebase is one frame period at the most frames a second the stream has (`IVFWriter`'s
/// `framesPerSecond`: the call's `--max-fps`), as libvpx's `vpxenc` writes it, and pts count those periods.
/// ffmpeg's `ivf` demuxer takes the header's rate/scale as the stream's time base and, for a stream whose
/// frames come at no fixed rate (a screen share sends a frame per change), falls back to its inverse as the
/// frame rate (`r_frame_rate`); `ffmpeg -i share.ivf share.mp4` writes that many frames a second. A finer
/// timebase makes that rate absurd: with 1/90 000 it read 90 000 fps and a conversion wrote 90 000 frames
/// for every second shared (issue 34: 168 MB after 10 minutes, from a 1 MB recording, still going).
///
/// Bytes 24–27: libvpx's `ivfenc` writes the frame count there, with pts 0, 1, 2, … in frame periods;
/// ffmpeg's `ivf` demuxer reads the field as the stream's duration in timebase units (`AVStream.duration`,
/// which `ffprobe` shows). We write the last pts plus one period: the span the frames cover, each shown
/// until the next and the last for one period. For a stream at the full rate that is also the frame count,
/// so both readings agree; for a screen share (fewer frames) it is the duration, which is what players use.
///
/// The header's width and height are the first frame's; a VP8 stream may change size at a keyframe, and
/// players follow the keyframe's own size.
public enum IVF {
    /// Bytes of the file header.
    public static let fileHeaderSize = 32
    /// Bytes of each frame header.
    public static let frameHeaderSize = 12
    /// Byte offset of the length field in the file header (rewritten when a recording is finished).
    public static let lengthOffset = 24
    /// The frame rate `IVFWriter` uses when not told one: the call's default `--max-fps`, frames a second.
    public static let defaultFramesPerSecond = 30.0
    /// The longest length the 32-bit header field holds: 2³² − 1 frame periods (about 4.5 years at 30 fps,
    /// 207 days at 240). A longer recording plays whole (pts are 64-bit); only the header's length stops there.
    public static let maximumLength = UInt64(UInt32.max)

    /// A frame rate as the header's rate/scale pair, reduced: `rate / scale` = `framesPerSecond`, with
    /// `framesPerSecond` rounded to 1/1000 (30 → 30/1, 7.5 → 15/2, 29.97 → 2997/100). The timebase is its
    /// inverse (`scale / rate` seconds). Rates are clamped to 0.001…1 000 000 frames a second.
    public static func rateAndScale(framesPerSecond: Double) -> (rate: UInt32, scale: UInt32) {
        let thousandths = UInt32((min(max(framesPerSecond, 0.001), 1_000_000) * 1000).rounded())
        var (a, b) = (thousandths, UInt32(1000))
        while b != 0 { (a, b) = (b, a % b) }
        return (thousandths / a, 1000 / a)
    }
}

/// The 32-byte IVF file header (see `IVF` for the layout).
public struct IVFFileHeader: Sendable, Equatable {
    /// The codec FourCC, `VP80` for VP8.
    public var fourCC: String
    /// Width of the first frame, pixels.
    public var width: Int
    /// Height of the first frame, pixels.
    public var height: Int
    /// Timebase numerator ("scale"): pts × numerator / denominator = seconds.
    public var timebaseNumerator: UInt32
    /// Timebase denominator ("rate").
    public var timebaseDenominator: UInt32
    /// The stream's length in timebase units (bytes 24–27; see `IVF`): what ffprobe shows as its
    /// duration. 0 while a recording is being written.
    public var length: UInt32

    /// A VP8 header; the default timebase is 1/30 s, one frame period at `IVF.defaultFramesPerSecond`.
    public init(
        fourCC: String = "VP80", width: Int, height: Int, timebaseNumerator: UInt32 = 1,
        timebaseDenominator: UInt32 = 30, length: UInt32 = 0
    ) {
        self.fourCC = fourCC
        self.width = width
        self.height = height
        self.timebaseNumerator = timebaseNumerator
        self.timebaseDenominator = timebaseDenominator
        self.length = length
    }

    /// Appends the 32 header bytes to `out`.
    public func append(to out: inout [UInt8]) {
        out.append(contentsOf: Array("DKIF".utf8))
        IVF.appendLittleEndian(UInt16(0), to: &out)
        IVF.appendLittleEndian(UInt16(IVF.fileHeaderSize), to: &out)
        var code = Array(fourCC.utf8.prefix(4))
        while code.count < 4 { code.append(0x20) }
        out.append(contentsOf: code)
        IVF.appendLittleEndian(UInt16(clamping: width), to: &out)
        IVF.appendLittleEndian(UInt16(clamping: height), to: &out)
        IVF.appendLittleEndian(timebaseDenominator, to: &out)
        IVF.appendLittleEndian(timebaseNumerator, to: &out)
        IVF.appendLittleEndian(length, to: &out)
        IVF.appendLittleEndian(UInt32(0), to: &out)
    }

    /// Reads a header from the first 32 bytes of `bytes`.
    /// - Throws: `MediaError.malformedIVF` when there are fewer bytes, the signature is not `DKIF`, or
    ///   the header size field is below 32.
    public init(parsing bytes: ArraySlice<UInt8>) throws(MediaError) {
        guard bytes.count >= IVF.fileHeaderSize else {
            throw .malformedIVF("file header needs 32 bytes, got \(bytes.count)")
        }
        let base = bytes.startIndex
        guard Array(bytes[base..<base + 4]) == Array("DKIF".utf8) else {
            throw .malformedIVF("signature is not DKIF")
        }
        let headerSize = IVF.readLittleEndian(bytes, at: 6, count: 2)
        guard headerSize >= UInt64(IVF.fileHeaderSize) else {
            throw .malformedIVF("header size \(headerSize) is below 32")
        }
        fourCC = String(decoding: bytes[base + 8..<base + 12], as: UTF8.self)
        width = Int(IVF.readLittleEndian(bytes, at: 12, count: 2))
        height = Int(IVF.readLittleEndian(bytes, at: 14, count: 2))
        timebaseDenominator = UInt32(IVF.readLittleEndian(bytes, at: 16, count: 4))
        timebaseNumerator = UInt32(IVF.readLittleEndian(bytes, at: 20, count: 4))
        length = UInt32(IVF.readLittleEndian(bytes, at: 24, count: 4))
    }
}

/// Lays out an IVF stream in memory: the file header, then frame records (pure; the caller does the I/O).
///
/// The timebase is one frame period at `framesPerSecond` (see `IVF`). pts are capture times since the first
/// frame written, in those periods, rounded to the nearest (`capture µs × rate / (scale × 10⁶)`), and
/// strictly increasing: a frame that rounds to the previous frame's period or before it (two frames closer
/// than a period, as a keyframe re-encode can be) gets the previous pts + 1, and the frames after it come
/// back to their own periods at the next gap.
public struct IVFWriter: Sendable {
    /// Timebase numerator ("scale"): seconds per pts unit = `timebaseNumerator / timebaseDenominator`.
    public let timebaseNumerator: UInt32
    /// Timebase denominator ("rate"): `timebaseDenominator / timebaseNumerator` = frames a second.
    public let timebaseDenominator: UInt32
    private var firstCapture: UInt64?
    private var lastPts: UInt64?
    /// Frames laid out so far.
    public private(set) var frameCount = 0

    /// A writer before its first frame, for a stream of at most `framesPerSecond` frames a second (the
    /// call's `--max-fps`; rounded to 1/1000 by `IVF.rateAndScale`).
    public init(framesPerSecond: Double = IVF.defaultFramesPerSecond) {
        let (rate, scale) = IVF.rateAndScale(framesPerSecond: framesPerSecond)
        timebaseDenominator = rate
        timebaseNumerator = scale
    }

    /// The stream's length so far in timebase units (frame periods): the last pts plus one, the span from
    /// the first frame to the end of the last one's period; 0 before the first frame. At most
    /// `IVF.maximumLength`.
    public var length: UInt32 {
        guard let lastPts else { return 0 }
        return UInt32(clamping: min(lastPts, IVF.maximumLength - 1) + 1)
    }

    /// `length` in microseconds.
    public var lengthMicros: UInt64 { micros(ofPts: UInt64(length)) }

    /// `pts` timebase units in microseconds (rounded down).
    public func micros(ofPts pts: UInt64) -> UInt64 {
        let (high, low) = pts.multipliedFullWidth(by: UInt64(timebaseNumerator) * 1_000_000)
        let divisor = UInt64(timebaseDenominator)
        guard high < divisor else { return UInt64.max }
        return divisor.dividingFullWidth((high, low)).quotient
    }

    /// The file header for a stream whose first frame is `width`×`height`, with `length` in timebase units
    /// (0 while recording; `length` when finished).
    public func fileHeader(width: Int, height: Int, length: UInt32 = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(IVF.fileHeaderSize)
        IVFFileHeader(width: width, height: height, timebaseNumerator: timebaseNumerator,
                      timebaseDenominator: timebaseDenominator, length: length).append(to: &out)
        return out
    }

    /// Replaces `out`'s contents with the 12-byte frame header of `frame` (its bytes follow it in the file).
    /// Keeps `out`'s capacity, so a recorder that reuses one array allocates nothing per frame.
    public mutating func frameHeader(for frame: EncodedFrame, into out: inout [UInt8]) {
        let first = firstCapture ?? frame.captureTimestampMicros
        firstCapture = first
        let elapsedMicros = frame.captureTimestampMicros &- min(first, frame.captureTimestampMicros)
        var pts = periods(ofMicros: elapsedMicros)
        if let lastPts, pts <= lastPts { pts = lastPts + 1 }
        lastPts = pts
        frameCount += 1
        out.removeAll(keepingCapacity: true)
        IVF.appendLittleEndian(UInt32(clamping: frame.bytes.count), to: &out)
        IVF.appendLittleEndian(pts, to: &out)
    }

    /// `micros` in timebase units, rounded to the nearest (128-bit product: no overflow).
    private func periods(ofMicros micros: UInt64) -> UInt64 {
        let divisor = UInt64(timebaseNumerator) * 1_000_000
        let product = micros.multipliedFullWidth(by: UInt64(timebaseDenominator))
        let (sum, carry) = product.low.addingReportingOverflow(divisor / 2)
        let high = product.high + (carry ? 1 : 0)
        guard high < divisor else { return UInt64.max / 2 }
        return divisor.dividingFullWidth((high, sum)).quotient
    }
}

/// Reads a whole IVF file held in memory (for tests and checks).
public struct IVFReader: Sendable {
    /// One frame record.
    public struct Record: Sendable, Equatable {
        /// Presentation time in timebase units.
        public var pts: UInt64
        /// The frame's bytes (a VP8 frame).
        public var bytes: [UInt8]
    }

    /// The file header.
    public let header: IVFFileHeader
    /// Every frame, in file order.
    public let frames: [Record]

    /// - Throws: `MediaError.malformedIVF` for a bad header or a frame that runs past the end.
    public init(bytes: [UInt8]) throws(MediaError) {
        header = try IVFFileHeader(parsing: bytes[...])
        let headerSize = Int(IVF.readLittleEndian(bytes[...], at: 6, count: 2))
        var offset = headerSize
        var records: [Record] = []
        while offset < bytes.count {
            guard bytes.count - offset >= IVF.frameHeaderSize else {
                throw .malformedIVF("frame header at \(offset) is cut short")
            }
            let size = Int(IVF.readLittleEndian(bytes[...], at: offset, count: 4))
            let pts = IVF.readLittleEndian(bytes[...], at: offset + 4, count: 8)
            let start = offset + IVF.frameHeaderSize
            guard bytes.count - start >= size else {
                throw .malformedIVF("frame at \(offset) claims \(size) bytes, \(bytes.count - start) remain")
            }
            records.append(Record(pts: pts, bytes: Array(bytes[start..<start + size])))
            offset = start + size
        }
        frames = records
    }
}

extension IVF {
    static func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        var v = value.littleEndian
        withUnsafeBytes(of: &v) { out.append(contentsOf: $0) }
    }

    static func readLittleEndian(_ bytes: ArraySlice<UInt8>, at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<count { value |= UInt64(bytes[bytes.startIndex + offset + i]) << (8 * UInt64(i)) }
        return value
    }
}
