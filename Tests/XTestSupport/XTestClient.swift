public import CXCB
import Foundation
import Media

/// A small X client for tests: paints known pixels on the root window (as its background, so they stay),
/// creates and moves plain windows, and reads the cursor image. One xcb connection, closed in `deinit`.
public final class XTestClient {
    private let connection: OpaquePointer
    public let root: xcb_window_t
    private let rootVisual: xcb_visualid_t

    public init(display: String) throws {
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(display, &screenNumber), xcb_connection_has_error(connection) == 0 else {
            throw XServerError(message: "test client cannot connect to \(display)")
        }
        self.connection = connection
        var screens = xcb_setup_roots_iterator(xcb_get_setup(connection))
        for _ in 0..<screenNumber { xcb_screen_next(&screens) }
        root = screens.data.pointee.root
        rootVisual = screens.data.pointee.root_visual
    }

    deinit { xcb_disconnect(connection) }

    /// Waits until the server has handled every request sent so far.
    public func sync() {
        free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), nil))
    }

    /// Makes `image` the root window's background (top-left aligned) and repaints the root.
    public func setRootBackground(_ image: BGRXImage) {
        let pixmap = xcb_generate_id(connection)
        xcb_create_pixmap(connection, 24, pixmap, root, UInt16(image.width), UInt16(image.height))
        let gc = xcb_generate_id(connection)
        xcb_create_gc(connection, gc, pixmap, 0, nil)
        // PutImage in bands that stay well under the core request size limit (256 KiB).
        let rowsPerBand = max(1, 60_000 / image.stride)
        image.withUnsafeBytes { raw in
            var row = 0
            while row < image.height {
                let rows = min(rowsPerBand, image.height - row)
                xcb_put_image(
                    connection, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), pixmap, gc, UInt16(image.width), UInt16(rows),
                    0, Int16(row), 0, 24, UInt32(rows * image.stride),
                    raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * image.stride)
                row += rows
            }
        }
        var value = pixmap
        xcb_change_window_attributes(connection, root, UInt32(XCB_CW_BACK_PIXMAP.rawValue), &value)
        xcb_clear_area(connection, 0, root, 0, 0, 0, 0)
        xcb_free_gc(connection, gc)
        xcb_free_pixmap(connection, pixmap)
        sync()
    }

    /// Fills the root window with one colour (`0xRRGGBB`).
    public func setRootColor(_ rgb: UInt32) {
        var value = rgb
        xcb_change_window_attributes(connection, root, UInt32(XCB_CW_BACK_PIXEL.rawValue), &value)
        xcb_clear_area(connection, 0, root, 0, 0, 0, 0)
        sync()
    }

    /// Creates and maps a plain window of one colour (no window manager: it appears exactly there).
    public func createWindow(x: Int, y: Int, width: Int, height: Int, color: UInt32) -> xcb_window_t {
        let window = xcb_generate_id(connection)
        var values: [UInt32] = [color, 1]  // BACK_PIXEL, OVERRIDE_REDIRECT
        xcb_create_window(
            connection, 24, window, root, Int16(x), Int16(y), UInt16(width), UInt16(height), 0,
            UInt16(XCB_WINDOW_CLASS_INPUT_OUTPUT.rawValue), rootVisual,
            UInt32(XCB_CW_BACK_PIXEL.rawValue | XCB_CW_OVERRIDE_REDIRECT.rawValue), &values)
        xcb_map_window(connection, window)
        sync()
        return window
    }

    /// Moves a window.
    public func move(_ window: xcb_window_t, x: Int, y: Int) {
        var values: [UInt32] = [UInt32(bitPattern: Int32(x)), UInt32(bitPattern: Int32(y))]
        xcb_configure_window(connection, window, UInt16(XCB_CONFIG_WINDOW_X.rawValue | XCB_CONFIG_WINDOW_Y.rawValue), &values)
        sync()
    }

    /// The current cursor: size, hotspot and premultiplied ARGB pixels (XFIXES).
    public func cursorImage() -> (width: Int, height: Int, xhot: Int, yhot: Int, pixels: [UInt32]) {
        free(xcb_xfixes_query_version_reply(connection, xcb_xfixes_query_version(connection, 5, 0), nil))
        guard let reply = xcb_xfixes_get_cursor_image_reply(connection, xcb_xfixes_get_cursor_image(connection), nil) else {
            return (0, 0, 0, 0, [])
        }
        defer { free(reply) }
        let width = Int(reply.pointee.width), height = Int(reply.pointee.height)
        let pixels = Array(UnsafeBufferPointer(start: xcb_xfixes_get_cursor_image_cursor_image(reply), count: width * height))
        return (width, height, Int(reply.pointee.xhot), Int(reply.pointee.yhot), pixels)
    }

    /// The pointer position on the root window.
    public func pointer() -> (x: Int, y: Int) {
        guard let reply = xcb_query_pointer_reply(connection, xcb_query_pointer(connection, root), nil) else { return (-1, -1) }
        defer { free(reply) }
        return (Int(reply.pointee.root_x), Int(reply.pointee.root_y))
    }
}
