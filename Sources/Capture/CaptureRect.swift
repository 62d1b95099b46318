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

    /// Parses the `--region` syntax: `X,Y,W,H`, or `WxH+X+Y` as X11 geometry strings, `--list-monitors` and
    /// the logs write it (``description``). Whole numbers, `X`,`Y` ≥ 0, `W`,`H` ≥ 1, each at most 32767 (X11
    /// coordinates are 16-bit). Spaces and signs other than the geometry's `+` are not allowed.
    /// - Returns: nil when the text matches neither form.
    public init?(parsing text: String) {
        let numbers: [Substring]
        if text.contains(",") {
            numbers = text.split(separator: ",", omittingEmptySubsequences: false)
        } else {
            // WxH+X+Y → [X, Y, W, H]
            let plus = text.split(separator: "+", omittingEmptySubsequences: false)
            guard plus.count == 3 else { return nil }
            let size = plus[0].split(separator: "x", omittingEmptySubsequences: false)
            guard size.count == 2 else { return nil }
            numbers = [plus[1], plus[2], size[0], size[1]]
        }
        guard numbers.count == 4 else { return nil }
        let values = numbers.compactMap { part -> Int? in
            guard !part.isEmpty, part.count <= 5, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(part)
        }
        guard values.count == 4, values[0] <= 32_767, values[1] <= 32_767,
            (1...32_767).contains(values[2]), (1...32_767).contains(values[3])
        else { return nil }
        self.init(x: values[0], y: values[1], width: values[2], height: values[3])
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
