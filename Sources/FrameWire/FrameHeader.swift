/// The header fields of one frame message (Protocol/frame-wire.md §2).
///
/// Sizes are in pixels, `contentLength` in bytes; the optional extras are written only by our agent.
public struct FrameHeader: Sendable, Equatable, Hashable {
    /// `Content-Length`: bytes of body that follow the header block, 1…``FrameWireLimits/maxBodyBytes``;
    /// for an I420 body exactly ``BufferFormat/i420ByteCount(width:height:)`` of the buffer size.
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
    /// `Buffer-Format`: what the body is (absent on the wire means ``BufferFormat/jpeg``).
    public var format: BufferFormat
    /// `Buffer-Color-Range` as given (nil: absent): the YCbCr range of an I420 body. See
    /// ``bodyColorRange`` for what the body holds either way.
    public var colorRange: BufferColorRange?
    /// The `Capture-*` fields (Protocol/frame-wire.md §2.7): what the sender captures, for people (nil: none
    /// given; iOS senders never write them).
    public var capture: CaptureDescription?
    /// `Buffer-Memory` of a ``BufferFormat/sharedBGRX`` frame (Protocol/frame-wire.md §2.8): where the picture
    /// is in the shared memory; nil for every other format.
    public var memory: SharedPictureReference?
    /// `Buffer-Damage` (Protocol/frame-wire.md §2.9): the rectangles that may have changed since the previous
    /// message on this connection, within the buffer; `[]` nothing changed; nil unknown (absent, or
    /// malformed: then ``damageFault`` says why). A reader without the previous picture takes it all.
    public var damage: [DamageRect]?
    /// Why a `Buffer-Damage` value was refused (the frame is delivered anyway, ``damage`` nil); nil when
    /// the field was absent or good.
    public var damageFault: BufferDamageError?

    /// A header with each field as given (see the properties for units and ranges); the defaults are what an
    /// iOS sender writes: orientation 1 (up), a JPEG body, no extras. Nothing is checked here: the encoder
    /// writes what it is given and the decoder checks what it reads against ``FrameWireLimits``.
    public init(
        contentLength: Int, bufferWidth: Int, bufferHeight: Int, orientation: Int = 1,
        timestampMicros: UInt64? = nil, sequence: UInt64? = nil, format: BufferFormat = .jpeg,
        colorRange: BufferColorRange? = nil, capture: CaptureDescription? = nil, memory: SharedPictureReference? = nil,
        damage: [DamageRect]? = nil, damageFault: BufferDamageError? = nil
    ) {
        self.damage = damage
        self.damageFault = damageFault
        self.capture = capture
        self.memory = memory
        self.format = format
        self.colorRange = colorRange
        self.contentLength = contentLength
        self.bufferWidth = bufferWidth
        self.bufferHeight = bufferHeight
        self.orientation = orientation
        self.timestampMicros = timestampMicros
        self.sequence = sequence
    }

    /// The clockwise rotation a reader applies, as the iOS readers map `Buffer-Orientation`.
    public var rotation: Rotation { Rotation(orientation: orientation) }

    /// The YCbCr range of the body's samples (Protocol/frame-wire.md §2.6): a JPEG is JFIF, full range by
    /// definition; an I420 body is what `Buffer-Color-Range` says, full range when the field is absent
    /// (what our agent sent before the field existed, so old dumps replay in their true colours).
    public var bodyColorRange: BufferColorRange { colorRange ?? .full }

    /// The share of the picture ``damage`` covers, 0…1 (1 when unknown).
    public var damagedFraction: Double {
        guard let damage, bufferWidth > 0, bufferHeight > 0 else { return 1 }
        return Double(BufferDamage.coveredPixels(damage)) / Double(bufferWidth * bufferHeight)
    }
}

/// `Buffer-Color-Range` (Protocol/frame-wire.md §2.6): which codes an I420 body's BT.601 YCbCr samples span.
public enum BufferColorRange: String, Sendable, Equatable, Hashable, CaseIterable, CustomStringConvertible {
    /// BT.601 limited ("video") range: Y 16…235, Cb/Cr 16…240 (ITU-R BT.601-7 §2.5.3); what VP8 carries,
    /// and what our agent sends with `--format i420`.
    case limited
    /// BT.601 full range: all 0…255 (JFIF 1.02 §7); a JPEG's range.
    case full

    /// The value as written on the wire (`limited`, `full`).
    public var description: String { rawValue }
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

/// What a frame's body holds: `Buffer-Format` (Protocol/frame-wire.md §2.5).
public enum BufferFormat: String, Sendable, Equatable, Hashable, CaseIterable, CustomStringConvertible {
    /// A JPEG (JFIF) picture: what iOS senders write, and the default when the field is absent.
    case jpeg = "JPEG"
    /// The raw picture as planar I420, BT.601 YCbCr in the range `Buffer-Color-Range` names (full when
    /// absent; our agent sends limited), tightly packed: Y `width × height` bytes row by row, then U (Cb)
    /// and V (Cr), each
    /// `((width + 1) / 2) × ((height + 1) / 2)` bytes, where width and height are `Buffer-Width`/`-Height`.
    /// Our agent writes it only when asked (`--format i420`): for a call on the same machine.
    case i420 = "I420"
    /// The picture is in memory shared with the reader (Protocol/frame-wire.md §2.8): BGRX, 4 bytes a pixel
    /// (B, G, R, unused), rows of `4 × width` bytes, top to bottom, in the slot `Buffer-Memory` names of the
    /// memfd passed with `SCM_RIGHTS`; the body is one LF byte. Our agent writes it only when asked
    /// (`--format shm`): for a call on the same machine that maps the memory.
    case sharedBGRX = "BGRX-SHM"

    /// The value as written on the wire (`JPEG`, `I420`, `BGRX-SHM`).
    public var description: String { rawValue }

    /// Bytes of a tightly packed I420 picture of `width`×`height` pixels:
    /// `width·height + 2·((width+1)/2)·((height+1)/2)`.
    public static func i420ByteCount(width: Int, height: Int) -> Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }
}

/// `Buffer-Memory: <generation> <slot> <version>` (Protocol/frame-wire.md §2.8): which mapping, which of
/// its ``SharedPicture/slotCount`` slots, and the slot's seqlock version once the picture was written.
public struct SharedPictureReference: Sendable, Equatable, Hashable {
    /// The mapping's number, chosen by the sender; a new one comes with its own descriptor.
    public var generation: UInt64
    /// 0 or 1.
    public var slot: Int
    /// The slot's version after the write (even); another version in the memory means the slot was
    /// rewritten (the frame is stale).
    public var version: UInt64

    /// The three numbers as they go on the wire (not checked here; the reader refuses a slot other than 0 or 1
    /// and an odd version).
    public init(generation: UInt64, slot: Int, version: UInt64) {
        self.generation = generation
        self.slot = slot
        self.version = version
    }
}

/// What a header block describes (Protocol/frame-wire.md §2.10: `Message-Kind`).
enum ParsedHeader {
    case picture(FrameHeader)
    case sound(SoundHeader)
    /// A kind this reader does not know: its body is skipped whole.
    case unknown(kind: String, contentLength: Int)
}

/// One complete frame message: header fields and exactly `contentLength` body bytes (a JPEG, or I420 when
/// `header.format` says so).
public struct Frame: Sendable, Equatable {
    public var header: FrameHeader
    /// The body bytes as received, `header.contentLength` long. Not checked to be a JPEG here; an I420 body
    /// is known to have its exact size.
    public var body: [UInt8]
    /// Byte offset of the frame's status line from the start of the stream (skipped empty lines excluded).
    public var offset: Int
    /// Bytes of the header block as received, status line through the empty line.
    public var headerLength: Int
    /// For a ``BufferFormat/sharedBGRX`` frame read from a socket: the mapped memory its
    /// ``FrameHeader/memory`` names (attached by the socket reader; nil from a file or a plain decoder).
    public var sharedPicture: SharedPicture?

    /// The bytes this message occupied in the stream: `headerLength + body.count`.
    public var messageLength: Int { headerLength + body.count }

    /// Equal headers, bodies and positions, and the same mapping (by identity).
    public static func == (a: Frame, b: Frame) -> Bool {
        a.header == b.header && a.body == b.body && a.offset == b.offset && a.headerLength == b.headerLength
            && a.sharedPicture === b.sharedPicture
    }

    /// A frame of `header` and `body` (`body.count` should equal `header.contentLength`; not checked here),
    /// found at byte `offset` of its stream with a header block of `headerLength` bytes (0 when not read from
    /// a stream).
    public init(header: FrameHeader, body: [UInt8], offset: Int = 0, headerLength: Int = 0, sharedPicture: SharedPicture? = nil) {
        self.sharedPicture = sharedPicture
        self.header = header
        self.body = body
        self.offset = offset
        self.headerLength = headerLength
    }
}

/// What a sender captures, as its `Capture-*` header fields say it (Protocol/frame-wire.md §2.7): text for
/// people (`/stats`), never used to read the picture. Each value is any bytes but CR and LF, at most
/// ``maxValueBytes`` (longer ones are ignored), kept as first given; nil when absent.
public struct CaptureDescription: Sendable, Equatable, Hashable {
    /// `Capture-Display`: the X display, e.g. `:0`.
    public var display: String?
    /// `Capture-Area`: `screen`, `monitor NAME` or `region`.
    public var area: String?
    /// `Capture-Rect`: the captured rectangle of the screen, `WxH+X+Y` in screen pixels (before scaling).
    public var rect: String?
    /// `Capture-FPS`: the frame rate asked for (`--fps`), frames per second as a decimal.
    public var framesPerSecond: String?

    /// Values longer than this many bytes are ignored.
    public static let maxValueBytes = 256

    /// Each value as given, without CR and LF (a field value cannot hold them, §2.2).
    public init(display: String? = nil, area: String? = nil, rect: String? = nil, framesPerSecond: String? = nil) {
        func clean(_ value: String?) -> String? { value.map { String($0.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }) } }
        self.display = clean(display)
        self.area = clean(area)
        self.rect = clean(rect)
        self.framesPerSecond = clean(framesPerSecond)
    }

    /// True when no field is set.
    public var isEmpty: Bool { display == nil && area == nil && rect == nil && framesPerSecond == nil }

    /// The fields in wire order, with their values (only those set).
    public var fields: [(name: String, value: String)] {
        [("Capture-Display", display), ("Capture-Area", area), ("Capture-Rect", rect), ("Capture-FPS", framesPerSecond)]
            .compactMap { name, value in value.map { (name, $0) } }
    }
}
