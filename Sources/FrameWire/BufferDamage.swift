/// One rectangle of `Buffer-Damage` (Protocol/frame-wire.md §2.9): buffer pixels, top-left corner (`x`, `y`)
/// from the picture's top-left, `width`×`height` pixels, written `x,y,w,h`.
public struct DamageRect: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Left edge, pixels from the buffer's left.
    public var x: Int
    /// Top edge, pixels from the buffer's top.
    public var y: Int
    /// Width and height in pixels (0 or less: an empty rectangle).
    public var width: Int
    public var height: Int

    /// A rectangle with its top-left corner at (`x`, `y`), `width`×`height` buffer pixels (not checked:
    /// the parser and ``BufferDamage/fitted(_:width:height:)`` keep rectangles within the buffer).
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The whole `width`×`height` buffer.
    public static func whole(width: Int, height: Int) -> DamageRect { DamageRect(x: 0, y: 0, width: width, height: height) }

    /// Pixels covered (0 for an empty rectangle).
    public var area: Int { isEmpty ? 0 : width * height }
    /// True when the rectangle has no pixels.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The smallest rectangle holding both (the other one when either is empty).
    public func union(_ other: DamageRect) -> DamageRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let left = min(x, other.x), top = min(y, other.y)
        let right = max(x + width, other.x + other.width), bottom = max(y + height, other.y + other.height)
        return DamageRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The overlap (empty, zero-sized, when there is none).
    public func intersection(_ other: DamageRect) -> DamageRect {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        guard right > left, bottom > top else { return DamageRect(x: left, y: top, width: 0, height: 0) }
        return DamageRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// True when `other` lies wholly inside this rectangle.
    public func contains(_ other: DamageRect) -> Bool {
        other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
    }

    /// Grown outwards to even coordinates and sizes (the 2×2 blocks of I420 chroma), clipped to the buffer.
    public func alignedToChroma(width bufferWidth: Int, height bufferHeight: Int) -> DamageRect {
        let left = x & ~1, top = y & ~1
        let right = min(bufferWidth, (x + width + 1) & ~1), bottom = min(bufferHeight, (y + height + 1) & ~1)
        return DamageRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// `x,y,w,h` as on the wire.
    public var description: String { "\(x),\(y),\(width),\(height)" }
}

/// `Buffer-Damage` (Protocol/frame-wire.md §2.9): which pixels may have changed since the previous message on
/// the same connection.
///
///     buffer-damage = "none" / rect *( ";" rect )    ; "none" ASCII case-insensitive, OWS around it ignored
///     rect          = x "," y "," w "," h            ; 1*DIGIT each, buffer pixels, w and h >= 1
///
/// In a ``FrameHeader`` it is ``FrameHeader/damage``: nil when absent or malformed ("everything may have
/// changed"), `[]` for `none` (nothing changed: a keepalive), else at most ``maxRectangles`` rectangles,
/// each within the buffer.
public enum BufferDamage {
    /// Most rectangles a value holds; a writer with more sends their bounding box (``fitted(_:width:height:)``).
    public static let maxRectangles = 16

    /// Reads a value (OWS already trimmed) for a `width`×`height` buffer.
    /// - Returns: the rectangles (`[]` for `none`), or why the value is refused.
    static func parse(_ value: ArraySlice<UInt8>, width: Int, height: Int) -> Result<[DamageRect], BufferDamageError> {
        if value.count == 4, zip(value, "none".utf8).allSatisfy({ ($0 | 0x20) == $1 }) { return .success([]) }
        let parts = value.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard parts.count <= maxRectangles else { return .failure(.tooManyRectangles(count: parts.count, limit: maxRectangles)) }
        var rects: [DamageRect] = []
        rects.reserveCapacity(parts.count)
        for (index, part) in parts.enumerated() {
            let numbers = part.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            let values = numbers.compactMap { HeaderFields.digits($0) }
            guard numbers.count == 4, values.count == 4 else {
                return .failure(.syntax(index: index, value: HeaderFields.show(part)))
            }
            guard values[2] >= 1, values[3] >= 1 else { return .failure(.emptyRectangle(index: index)) }
            guard values[0] < UInt64(width), values[2] <= UInt64(width) - values[0],
                  values[1] < UInt64(height), values[3] <= UInt64(height) - values[1]
            else { return .failure(.outsideBuffer(index: index, value: HeaderFields.show(part), width: width, height: height)) }
            rects.append(DamageRect(x: Int(values[0]), y: Int(values[1]), width: Int(values[2]), height: Int(values[3])))
        }
        return .success(rects)
    }

    /// Appends the value for `rects` (`none` when empty) to `out`.
    static func append(_ rects: [DamageRect], to out: inout [UInt8]) {
        guard !rects.isEmpty else { return out.append(contentsOf: "none".utf8) }
        for (index, rect) in rects.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ";")) }
            out.append(contentsOf: String(rect.x).utf8)
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: String(rect.y).utf8)
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: String(rect.width).utf8)
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: String(rect.height).utf8)
        }
    }

    /// What a writer sends for `rects`: each clipped to the `width`×`height` buffer, empty ones and ones
    /// inside another dropped; beyond ``maxRectangles`` their bounding box alone.
    public static func fitted(_ rects: [DamageRect], width: Int, height: Int) -> [DamageRect] {
        let buffer = DamageRect.whole(width: width, height: height)
        var kept: [DamageRect] = []
        for rect in rects.map({ $0.intersection(buffer) }) where !rect.isEmpty {
            if kept.contains(where: { $0.contains(rect) }) { continue }
            kept.removeAll { rect.contains($0) }
            kept.append(rect)
        }
        guard kept.count > maxRectangles else { return kept }
        return [kept.dropFirst().reduce(kept[0]) { $0.union($1) }]
    }

    /// Pixels the rectangles cover, overlaps counted once (exact: the union's area), for `/stats`.
    public static func coveredPixels(_ rects: [DamageRect]) -> Int {
        if rects.count <= 1 { return rects.first?.area ?? 0 }  // the usual case, without allocating
        // Row bands between the distinct top and bottom edges; at most 2·16 bands of at most 16 spans.
        let edges = Set(rects.flatMap { [$0.y, $0.y + $0.height] }).sorted()
        var total = 0
        for (top, bottom) in zip(edges, edges.dropFirst()) {
            let spans = rects.filter { $0.y <= top && $0.y + $0.height >= bottom }.map { ($0.x, $0.x + $0.width) }.sorted { $0.0 < $1.0 }
            var covered = 0, reach = Int.min
            for (left, right) in spans where right > reach {
                covered += right - max(left, reach)
                reach = right
            }
            total += covered * (bottom - top)
        }
        return total
    }
}

/// Why a `Buffer-Damage` value was not used (Protocol/frame-wire.md §2.9). Never ends a stream: the frame is
/// delivered with its damage unknown (``FrameHeader/damage`` nil) and this in ``FrameHeader/damageFault``.
public enum BufferDamageError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Not `none` nor `x,y,w,h` rectangles of 1*DIGIT numbers joined by `;` (the rectangle's index, 0 first,
    /// and its text); also an empty value or a number beyond 64 bits.
    case syntax(index: Int, value: String)
    /// A rectangle with a width or height of 0.
    case emptyRectangle(index: Int)
    /// A rectangle reaching beyond the `width`×`height` buffer.
    case outsideBuffer(index: Int, value: String, width: Int, height: Int)
    /// More than ``BufferDamage/maxRectangles`` rectangles.
    case tooManyRectangles(count: Int, limit: Int)
    /// The field repeated with a different value.
    case conflicting

    /// The kind's name, as in golden expectations and `/stats`: `syntax`, `emptyRectangle`, ….
    public var kind: String {
        switch self {
        case .syntax: "syntax"
        case .emptyRectangle: "emptyRectangle"
        case .outsideBuffer: "outsideBuffer"
        case .tooManyRectangles: "tooManyRectangles"
        case .conflicting: "conflicting"
        }
    }

    public var description: String {
        switch self {
        case .syntax(let index, let value): "rectangle \(index) is not x,y,w,h: \(value)"
        case .emptyRectangle(let index): "rectangle \(index) has no pixels"
        case .outsideBuffer(let index, let value, let width, let height): "rectangle \(index) (\(value)) is outside the \(width)x\(height) buffer"
        case .tooManyRectangles(let count, let limit): "\(count) rectangles, more than the limit of \(limit)"
        case .conflicting: "repeated with a different value"
        }
    }
}
