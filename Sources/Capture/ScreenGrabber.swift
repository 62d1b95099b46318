internal import CXCB
import Glibc
import Media
import ScreencastSupport

/// Pixels just read from the X server: BGRX rows in memory owned by the ``ScreenGrabber`` (a shared-memory
/// segment or a `GetImage` reply). Writable (the cursor is drawn into them); valid until the next grab.
struct GrabbedImage {
    let pixels: UnsafeMutableRawBufferPointer
    let width: Int
    let height: Int
    let stride: Int
    /// A sequence number of the main connection such that changes reported with an earlier one happened
    /// before the read and are in these pixels: the `ShmGetImage` request itself, or for `GetImage` (read on
    /// another connection) the round trip made on the main connection just before the read.
    let requestSequence: UInt32

    /// A read-only view for scaling and encoding.
    var view: BGRXPixels {
        BGRXPixels(base: UnsafeRawBufferPointer(pixels), width: width, height: height, stride: stride)
    }
}

/// Reads rectangles of the root window: with MIT-SHM (`xcb_shm_get_image` into a ``SharedMemorySegment``)
/// when the server offers it and can attach a segment, else with plain `xcb_get_image` (a remote display).
/// The choice is made at the first grab and logged once.
///
/// Plain `GetImage` runs on a second connection of its own. An X server with a software cursor (Xvfb,
/// seen with 21.1.7) removes and restores the cursor while it writes a `GetImage` reply band by band; with
/// the screen changing under the cursor it then writes DAMAGE events into the middle of the reply on the
/// connection that owns the damage object, and xcb reads garbage from then on. `ShmGetImage` is immune:
/// its reply is one 32-byte packet written after the pixels.
final class ScreenGrabber {
    /// How pixels travel from the server.
    enum Method: String {
        case sharedMemory = "mit-shm"
        case getImage = "get-image"
    }

    private let connection: XConnection
    private let logger: Logger
    private var allowSharedMemory: Bool
    private var segment: SharedMemorySegment?
    /// The connection for plain `GetImage` (no DAMAGE object, no events); opened on first use.
    private var imageConnection: XConnection?
    /// The last `GetImage` reply: its data is the last grabbed image (freed at the next grab / deinit).
    private var reply: UnsafeMutablePointer<xcb_get_image_reply_t>?
    /// The method in use; nil before the first grab.
    private(set) var method: Method?

    /// - Parameter allowSharedMemory: false forces `GetImage` (for tests and odd setups).
    init(connection: XConnection, allowSharedMemory: Bool, logger: Logger) {
        self.connection = connection
        self.allowSharedMemory = allowSharedMemory && connection.hasSharedMemory
        self.logger = logger
        if allowSharedMemory, !connection.hasSharedMemory {
            logger.warning("MIT-SHM not offered by the X server; using GetImage", ["display": connection.displayName])
            method = .getImage
        }
    }

    deinit { free(reply) }

    /// Reads `rect` (which must lie inside the root window) as BGRX.
    /// - Throws: ``CaptureError/requestFailed(request:errorCode:)`` (e.g. BadMatch for a rectangle outside
    ///   the screen) or ``CaptureError/connectionLost(display:reason:)``.
    /// - Parameter drawable: what to read from: the root window (nil, the default), or a pixmap or window of
    ///   the same depth's 32-bit pixels (a window's Composite pixmap, `--window`).
    func grab(_ rect: CaptureRect, from drawable: xcb_drawable_t? = nil) throws(CaptureError) -> GrabbedImage {
        if allowSharedMemory, let image = try grabShared(rect, from: drawable ?? connection.root) { return image }
        return try grabPlain(rect, from: drawable)
    }

    /// The MIT-SHM path; nil when a segment cannot be attached (then `GetImage` is used from now on).
    private func grabShared(_ rect: CaptureRect, from drawable: xcb_drawable_t) throws(CaptureError) -> GrabbedImage? {
        let stride = rect.width * BGRXImage.bytesPerPixel
        let size = stride * rect.height
        if segment.map({ $0.size < size }) ?? true {
            segment = nil
            do {
                segment = try SharedMemorySegment(connection: connection, size: size)
            } catch {
                try connection.checkAlive()
                allowSharedMemory = false
                method = .getImage
                logger.warning("MIT-SHM unavailable; using GetImage", ["display": connection.displayName, "reason": error])
                return nil
            }
            if method == nil {
                method = .sharedMemory
                logger.info("capturing with MIT-SHM", ["display": connection.displayName])
            }
        }
        guard let segment else { return nil }
        let handle = connection.handle
        let cookie = xcb_shm_get_image(
            handle, drawable, Int16(rect.x), Int16(rect.y), UInt16(rect.width), UInt16(rect.height), ~0,
            UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), segment.segment, 0)
        let reply = try connection.reply("ShmGetImage") { xcb_shm_get_image_reply(handle, cookie, $0) }
        let written = Int(reply.pointee.size)
        free(reply)
        guard written >= size else { throw .requestFailed(request: "ShmGetImage (short image)", errorCode: 0) }
        return GrabbedImage(pixels: UnsafeMutableRawBufferPointer(start: segment.address, count: size),
                            width: rect.width, height: rect.height, stride: stride, requestSequence: cookie.sequence)
    }

    /// The plain `GetImage` path: the pixels stay in xcb's reply buffer (no copy).
    private func grabPlain(_ rect: CaptureRect, from drawable: xcb_drawable_t?) throws(CaptureError) -> GrabbedImage {
        if method == nil {
            method = .getImage
            logger.info("capturing with GetImage (MIT-SHM disabled)", ["display": connection.displayName])
        }
        free(reply)
        reply = nil
        if imageConnection == nil {
            do {
                imageConnection = try XConnection(display: connection.displayName)
            } catch {
                throw .connectionLost(display: connection.displayName, reason: "second connection for GetImage: \(error)")
            }
        }
        guard let imageConnection else { throw .requestFailed(request: "GetImage", errorCode: 0) }
        // The damage repair sent on the main connection must be handled before the pixels are read on the
        // other one, or changes between the read and the repair would be lost.
        let synced = try connection.sync()
        let handle = imageConnection.handle
        // A pixmap's id is the server's, valid on any connection.
        let source = drawable ?? imageConnection.root
        let cookie = xcb_get_image(
            handle, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), source,
            Int16(rect.x), Int16(rect.y), UInt16(rect.width), UInt16(rect.height), ~0)
        let image = try imageConnection.reply("GetImage") { xcb_get_image_reply(handle, cookie, $0) }
        reply = image
        let stride = rect.width * BGRXImage.bytesPerPixel
        let length = Int(xcb_get_image_data_length(image))
        guard length >= stride * rect.height, let data = xcb_get_image_data(image) else {
            throw .requestFailed(request: "GetImage (short image)", errorCode: 0)
        }
        return GrabbedImage(pixels: UnsafeMutableRawBufferPointer(start: data, count: length),
                            width: rect.width, height: rect.height, stride: stride, requestSequence: synced)
    }
}
