internal import CPipeWire

/// Why a buffer's cursor meta was refused (nothing past the meta region is ever read).
public enum PipeWireCursorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The region cannot hold a `spa_meta_cursor` (bytes given).
    case regionTooSmall(Int)
    /// The cursor's `bitmap_offset` puts its `spa_meta_bitmap` outside the region.
    case bitmapOutsideRegion(offset: UInt32, region: Int)
    /// The bitmap's pixels (`offset`, `stride` × `height`) run past the region.
    case pixelsOutsideRegion(offset: UInt32, stride: Int32, height: UInt32, available: Int)
    /// A stride shorter than a row of 4-byte pixels (or negative).
    case badStride(stride: Int32, width: UInt32)
    /// Larger than ``PointerState/maxSide`` on a side.
    case tooLarge(width: UInt32, height: UInt32)
    /// A format other than RGBA, BGRA, ARGB, ABGR (SPA_VIDEO_FORMAT_* value).
    case unsupportedFormat(UInt32)

    public var description: String {
        switch self {
        case .regionTooSmall(let size): "cursor meta of \(size) bytes, too small for a spa_meta_cursor"
        case .bitmapOutsideRegion(let offset, let region): "cursor bitmap at offset \(offset) outside the \(region)-byte meta region"
        case .pixelsOutsideRegion(let offset, let stride, let height, let available):
            "cursor pixels at offset \(offset), \(height) rows of \(stride) bytes, past the \(available) bytes after the bitmap header"
        case .badStride(let stride, let width): "cursor bitmap stride \(stride) for \(width) pixels of 4 bytes"
        case .tooLarge(let width, let height): "cursor bitmap \(width)x\(height), over \(PointerState.maxSide) pixels a side"
        case .unsupportedFormat(let format): "cursor bitmap format \(format) (only RGBA, BGRA, ARGB, ABGR are read)"
        }
    }
}

/// The pointer as a PipeWire producer describes it in each buffer's SPA_META_Cursor (the portal's cursor mode
/// METADATA): where it is and its picture, kept from buffer to buffer. Sans-I/O: ``apply(_:)`` reads the bytes of
/// one meta region; nothing here touches PipeWire.
///
/// The region's layout (SPA's `spa/buffer/meta.h`): a `struct spa_meta_cursor` (id, flags, position, hotspot,
/// bitmap_offset); when `bitmap_offset` ≥ its size, a `struct spa_meta_bitmap` (format, size, stride, offset) at
/// that offset, whose pixels start `offset` bytes after the bitmap header. Native byte order (the producer is on
/// this machine). Rules: cursor `id` 0 hides the pointer; `bitmap_offset` 0, or a bitmap of format 0, keeps the
/// previous picture; a bitmap `offset` of 0 or a size of 0 is an empty (invisible) picture.
///
/// The picture is kept as ``pixels``: `width × height` premultiplied ARGB words (bytes B, G, R, A in memory), the
/// shape X11's XFIXES gives, so one blend draws both (``CursorOverlay``). Producers write premultiplied alpha
/// (GNOME's Mutter and KDE's KWin read their cursor sprites as premultiplied RGBA); the bytes are only reordered.
public struct PointerState: Sendable {
    /// The largest picture taken, pixels a side (the cursor meta asked for holds 256 × 256, CPW_MAX_CURSOR_SIDE).
    public static let maxSide = Int(CPW_MAX_CURSOR_SIDE)

    /// The picture, premultiplied ARGB words (B, G, R, A bytes), `width × height`, rows without padding.
    public private(set) var pixels: [UInt32] = []
    public private(set) var width = 0
    public private(set) var height = 0
    /// The hotspot inside the picture, pixels from its top-left corner.
    public private(set) var hotspot = (x: 0, y: 0)
    /// The hotspot's position in the stream's picture, pixels; nil when the pointer is hidden (id 0).
    public private(set) var position: (x: Int, y: Int)?

    public init() {}

    /// Where the picture is drawn: its top-left corner (position − hotspot) and size; nil when nothing is drawn
    /// (hidden, or an empty picture).
    public var bounds: (x: Int, y: Int, width: Int, height: Int)? {
        guard let position, width > 0, height > 0 else { return nil }
        return (position.x - hotspot.x, position.y - hotspot.y, width, height)
    }

    /// Reads one SPA_META_Cursor region (`region`: its bytes as the producer wrote them). On a refusal nothing
    /// changes.
    /// - Returns: whether the drawn pointer changed (position, visibility or picture).
    /// - Throws: ``PipeWireCursorError`` when the region is too small, the bitmap or its pixels lie outside it, or
    ///   the bitmap's format, stride or size cannot be read.
    @discardableResult
    public mutating func apply(_ region: UnsafeRawBufferPointer) throws(PipeWireCursorError) -> Bool {
        let cursorSize = MemoryLayout<spa_meta_cursor>.size
        guard region.count >= cursorSize else { throw .regionTooSmall(region.count) }
        let cursor = region.loadUnaligned(as: spa_meta_cursor.self)
        guard cursor.id != 0 else {
            defer { position = nil }
            return position != nil
        }
        let before = bounds
        var reshaped = false
        if cursor.bitmap_offset != 0 {
            reshaped = try readBitmap(region, at: cursor.bitmap_offset)
            if reshaped { hotspot = (Int(cursor.hotspot.x), Int(cursor.hotspot.y)) }
        }
        position = (Int(cursor.position.x), Int(cursor.position.y))
        let after = bounds
        return reshaped || before?.x != after?.x || before?.y != after?.y || (before == nil) != (after == nil)
    }

    /// Reads the bitmap at `offset`; false when it carries no new picture (format 0).
    private mutating func readBitmap(_ region: UnsafeRawBufferPointer, at offset: UInt32) throws(PipeWireCursorError) -> Bool {
        let headerSize = MemoryLayout<spa_meta_bitmap>.size
        guard Int(offset) >= MemoryLayout<spa_meta_cursor>.size, Int(offset) <= region.count - headerSize else {
            throw .bitmapOutsideRegion(offset: offset, region: region.count)
        }
        let bitmap = region.loadUnaligned(fromByteOffset: Int(offset), as: spa_meta_bitmap.self)
        guard bitmap.format != 0 else { return false }
        let (w, h) = (bitmap.size.width, bitmap.size.height)
        if bitmap.offset == 0 || w == 0 || h == 0 {
            (width, height) = (0, 0)
            pixels.removeAll(keepingCapacity: true)
            return true
        }
        let order = try Self.byteOrder(bitmap.format)
        guard w <= UInt32(Self.maxSide), h <= UInt32(Self.maxSide) else { throw .tooLarge(width: w, height: h) }
        guard bitmap.stride >= 0, Int(bitmap.stride) >= Int(w) * 4 else { throw .badStride(stride: bitmap.stride, width: w) }
        let available = region.count - Int(offset)
        let needed = Int(bitmap.offset) + Int(bitmap.stride) * (Int(h) - 1) + Int(w) * 4
        guard Int(bitmap.offset) >= headerSize, needed <= available else {
            throw .pixelsOutsideRegion(offset: bitmap.offset, stride: bitmap.stride, height: h, available: available)
        }
        (width, height) = (Int(w), Int(h))
        let start = Int(offset) + Int(bitmap.offset)
        let stride = Int(bitmap.stride)
        if pixels.count != width * height { pixels = [UInt32](repeating: 0, count: width * height) }
        pixels.withUnsafeMutableBufferPointer { words in
            for y in 0..<height {
                let row = start + y * stride
                for x in 0..<width {
                    let p = row + x * 4
                    let b0 = UInt32(region[p]), b1 = UInt32(region[p + 1]), b2 = UInt32(region[p + 2]), b3 = UInt32(region[p + 3])
                    let (r, g, b, a): (UInt32, UInt32, UInt32, UInt32)
                    switch order {
                    case .rgba: (r, g, b, a) = (b0, b1, b2, b3)
                    case .bgra: (r, g, b, a) = (b2, b1, b0, b3)
                    case .argb: (r, g, b, a) = (b1, b2, b3, b0)
                    case .abgr: (r, g, b, a) = (b3, b2, b1, b0)
                    }
                    words[y * width + x] = a << 24 | r << 16 | g << 8 | b
                }
            }
        }
        return true
    }

    /// The byte orders read (SPA video formats name the bytes in memory order).
    private enum ByteOrder { case rgba, bgra, argb, abgr }

    private static func byteOrder(_ format: UInt32) throws(PipeWireCursorError) -> ByteOrder {
        switch format {
        case SPA_VIDEO_FORMAT_RGBA.rawValue: .rgba
        case SPA_VIDEO_FORMAT_BGRA.rawValue: .bgra
        case SPA_VIDEO_FORMAT_ARGB.rawValue: .argb
        case SPA_VIDEO_FORMAT_ABGR.rawValue: .abgr
        default: throw .unsupportedFormat(format)
        }
    }
}
