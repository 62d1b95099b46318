/// A rectangle of the X screen in pixels: top-left corner (`x`, `y`) and size, root-window coordinates.
public struct CaptureRect: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Left edge, pixels from the screen's left.
    public var x: Int
    /// Top edge, pixels from the screen's top.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A rectangle with its top-left corner at (`x`, `y`), `width`×`height` pixels.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// Parses `X,Y,W,H` (the `--region` syntax): whole numbers, `X`,`Y` ≥ 0, `W`,`H` ≥ 1, each side at most
    /// 32767 (X11 coordinates are 16-bit). Spaces around the numbers are not allowed.
    /// - Returns: nil when the text does not match.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let numbers = parts.compactMap { part -> Int? in
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(part)
        }
        guard numbers.count == 4, numbers[0] <= 32_767, numbers[1] <= 32_767,
            (1...32_767).contains(numbers[2]), (1...32_767).contains(numbers[3])
        else { return nil }
        self.init(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }

    /// True when the rectangle has no pixels.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The overlap of two rectangles (empty, with zero size, when they do not overlap).
    public func intersection(_ other: CaptureRect) -> CaptureRect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        let right = min(x + width, other.x + other.width)
        let bottom = min(y + height, other.y + other.height)
        guard right > left, bottom > top else { return CaptureRect(x: left, y: top, width: 0, height: 0) }
        return CaptureRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// True when the rectangles share at least one pixel.
    public func intersects(_ other: CaptureRect) -> Bool { !intersection(other).isEmpty }

    /// `WxH+X+Y`, as X11 geometry strings are written.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
