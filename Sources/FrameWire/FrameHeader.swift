/// The header fields of one frame message (Protocol/frame-wire.md §2).
///
/// Sizes are in pixels, `contentLength` in bytes; the optional extras are written only by our agent.
public struct FrameHeader: Sendable, Equatable, Hashable {
    /// `Content-Length`: bytes of JPEG body that follow the header block, 1…``FrameWireLimits/maxBodyBytes``.
    public var contentLength: Int
    /// `Buffer-Width`: the sender's buffer width in pixels, 1…``FrameWireLimits/maxDimension``.
    public var bufferWidth: Int
    /// `Buffer-Height`: the sender's buffer height in pixels, 1…``FrameWireLimits/maxDimension``.
    public var bufferHeight: Int
    /// `Buffer-Orientation`: the EXIF/CGImagePropertyOrientation value 0…255 (missing or unparsable means 0).
    public var orientation: Int
    /// `Buffer-Timestamp`: capture time, CLOCK_MONOTONIC microseconds (our agent only).
    public var timestampMicros: UInt64?
    /// `Buffer-Sequence`: the sender's frame counter (our agent only).
    public var sequence: UInt64?

    public init(
        contentLength: Int, bufferWidth: Int, bufferHeight: Int, orientation: Int = 1,
        timestampMicros: UInt64? = nil, sequence: UInt64? = nil
    ) {
        self.contentLength = contentLength
        self.bufferWidth = bufferWidth
        self.bufferHeight = bufferHeight
        self.orientation = orientation
        self.timestampMicros = timestampMicros
        self.sequence = sequence
    }

    /// The clockwise rotation a reader applies, as the iOS readers map `Buffer-Orientation`.
    public var rotation: Rotation { Rotation(orientation: orientation) }
}

/// Clockwise rotation in degrees that a reader applies to a frame before use.
public enum Rotation: Int, Sendable, Equatable, Hashable, CaseIterable {
    case none = 0
    case clockwise90 = 90
    case clockwise180 = 180
    case clockwise270 = 270

    /// The iOS readers' mapping: 8 → 90°, 3 → 180°, 6 → 270°, every other value (mirrored ones too) → 0°.
    public init(orientation: Int) {
        switch orientation {
        case 8: self = .clockwise90
        case 3: self = .clockwise180
        case 6: self = .clockwise270
        default: self = .none
        }
    }

    /// The angle in degrees: 0, 90, 180 or 270.
    public var degrees: Int { rawValue }
}

/// One complete frame message: header fields and exactly `contentLength` body bytes (a JPEG).
public struct Frame: Sendable, Equatable {
    public var header: FrameHeader
    /// The body bytes as received, `header.contentLength` long. Not checked to be a JPEG here.
    public var body: [UInt8]
    /// Byte offset of the frame's status line from the start of the stream (skipped empty lines excluded).
    public var offset: Int
    /// Bytes of the header block as received, status line through the empty line.
    public var headerLength: Int

    /// The bytes this message occupied in the stream: `headerLength + body.count`.
    public var messageLength: Int { headerLength + body.count }

    public init(header: FrameHeader, body: [UInt8], offset: Int = 0, headerLength: Int = 0) {
        self.header = header
        self.body = body
        self.offset = offset
        self.headerLength = headerLength
    }
}
