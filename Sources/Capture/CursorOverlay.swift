internal import CXCB
internal import CYUV
import Glibc

/// The pointer's cursor, drawn into captured frames: the X server leaves the cursor out of `GetImage`, so
/// its picture comes from XFIXES (`GetCursorImage`: premultiplied ARGB, with the hotspot) and its position
/// from `QueryPointer`. The picture is fetched again only when XFIXES reports a new cursor shape.
///
/// The image's top-left corner on screen is the pointer position minus the hotspot.
final class CursorOverlay {
    private let connection: XConnection
    /// The cursor picture, `width × height` premultiplied ARGB words (bytes B, G, R, A in memory).
    private var pixels: [UInt32] = []
    private var width = 0
    private var height = 0
    private var hotspot = (x: 0, y: 0)
    private var shapeIsCurrent = false
    /// Where the cursor picture is on screen (root coordinates); nil when the pointer is on another screen.
    private(set) var bounds: CaptureRect?

    /// Subscribes to cursor-shape changes.
    /// - Throws: ``CaptureError/requestFailed(request:errorCode:)``.
    init(connection: XConnection) throws(CaptureError) {
        self.connection = connection
        try connection.check("XFixesSelectCursorInput", xcb_xfixes_select_cursor_input_checked(
            connection.handle, connection.root, UInt32(XCB_XFIXES_CURSOR_NOTIFY_MASK_DISPLAY_CURSOR.rawValue)))
    }

    /// The cursor's shape changed (XFIXES notify): fetch the picture again at the next ``update()``.
    func shapeChanged() { shapeIsCurrent = false }

    /// Reads the pointer position (and the picture, when its shape changed).
    /// - Returns: the screen areas to repaint — where the cursor was and where it is now — when anything
    ///   changed; nil when nothing did.
    func update() throws(CaptureError) -> [CaptureRect]? {
        let before = bounds
        let reshaped = !shapeIsCurrent
        if reshaped { try fetchShape() }
        let handle = connection.handle
        let root = connection.root
        let pointer = try connection.reply("QueryPointer") { xcb_query_pointer_reply(handle, xcb_query_pointer(handle, root), $0) }
        let onScreen = pointer.pointee.same_screen != 0
        let position = (x: Int(pointer.pointee.root_x), y: Int(pointer.pointee.root_y))
        free(pointer)
        bounds = onScreen && width > 0 && height > 0
            ? CaptureRect(x: position.x - hotspot.x, y: position.y - hotspot.y, width: width, height: height) : nil
        guard reshaped || before != bounds else { return nil }
        return [before, bounds].compactMap { $0 }
    }

    /// Blends the cursor picture over `image`, which shows the screen area `area`.
    func draw(into image: GrabbedImage, showing area: CaptureRect) {
        guard let bounds else { return }
        pixels.withUnsafeBufferPointer { cursor in
            Self.blend(cursor, width: width, at: bounds, into: image.pixels.baseAddress!, width: image.width,
                       height: image.height, stride: image.stride, showing: area)
        }
    }

    /// Blends a cursor picture over a frame, clipped to the frame: the one compositor of the pointer, for X11
    /// (XFIXES) and the portal's cursor metadata (``PortalCaptureLoop``).
    /// - Parameters:
    ///   - cursor: premultiplied ARGB words (bytes B, G, R, A), `width` a row, `bounds.height` rows.
    ///   - bounds: where the picture is on screen (its top-left corner: the pointer minus the hotspot).
    ///   - frame: BGRx pixels (4 bytes each), `stride` bytes a row, showing the screen area `area`
    ///     (`width × height` pixels of it); changed in place.
    static func blend(
        _ cursor: UnsafeBufferPointer<UInt32>, width cursorWidth: Int, at bounds: CaptureRect, into frame: UnsafeMutableRawPointer,
        width: Int, height: Int, stride: Int, showing area: CaptureRect
    ) {
        let visible = bounds.intersection(area)
        guard !visible.isEmpty, cursor.count >= cursorWidth * bounds.height else { return }
        let source = (x: visible.x - bounds.x, y: visible.y - bounds.y)
        let target = (x: visible.x - area.x, y: visible.y - area.y)
        guard target.x + visible.width <= width, target.y + visible.height <= height else { return }
        let cursorBytes = UnsafeRawPointer(cursor.baseAddress!).assumingMemoryBound(to: UInt8.self)
        let from = cursorBytes + (source.y * cursorWidth + source.x) * 4
        let to = frame.assumingMemoryBound(to: UInt8.self) + target.y * stride + target.x * 4
        // ARGBBlend: premultiplied source over destination, row by row; in place on the frame.
        _ = ARGBBlend(from, Int32(cursorWidth * 4), to, Int32(stride), to, Int32(stride),
                      Int32(visible.width), Int32(visible.height))
    }

    private func fetchShape() throws(CaptureError) {
        let handle = connection.handle
        let reply = try connection.reply("XFixesGetCursorImage") {
            xcb_xfixes_get_cursor_image_reply(handle, xcb_xfixes_get_cursor_image(handle), $0)
        }
        defer { free(reply) }
        width = Int(reply.pointee.width)
        height = Int(reply.pointee.height)
        hotspot = (Int(reply.pointee.xhot), Int(reply.pointee.yhot))
        let count = Int(xcb_xfixes_get_cursor_image_cursor_image_length(reply))
        if let data = xcb_xfixes_get_cursor_image_cursor_image(reply), count >= width * height {
            pixels = Array(UnsafeBufferPointer(start: data, count: width * height))
        } else {
            (width, height) = (0, 0)
            pixels = []
        }
        shapeIsCurrent = true
    }
}
