import CXCB
import Glibc
import Media
import ScreencastSupport

/// MIT-SHM capture of the whole root window (`xcb_shm_get_image` into a System V segment, as the agent
/// grabs), ms per grab; then the grabbed screen is the picture for the BGRX JPEG encode stage, so that
/// stage sees real desktop content. The copy itself happens in the X server: this is the wall time the
/// capture thread waits for it.
final class ShmCaptureStage {
    private let connection: OpaquePointer
    private let root: xcb_window_t
    let width: Int
    let height: Int
    private let segment: xcb_shm_seg_t
    private let address: UnsafeMutableRawPointer
    private let size: Int

    /// Connects to `display` and attaches a segment the size of the root window.
    /// - Throws: `BenchError` when the display does not open or MIT-SHM is unavailable.
    init(display: String) throws {
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(display, &screenNumber), xcb_connection_has_error(connection) == 0 else {
            throw BenchError("cannot connect to X display \(display)")
        }
        self.connection = connection
        var screens = xcb_setup_roots_iterator(xcb_get_setup(connection))
        for _ in 0..<max(0, Int(screenNumber)) { xcb_screen_next(&screens) }
        guard screens.rem > 0, let screen = screens.data?.pointee else {
            xcb_disconnect(connection)
            throw BenchError("display \(display) has no screen \(screenNumber)")
        }
        root = screen.root
        width = Int(screen.width_in_pixels)
        height = Int(screen.height_in_pixels)
        size = width * height * 4
        guard let shm = cxcb_shm_extension(connection), shm.pointee.present != 0 else {
            xcb_disconnect(connection)
            throw BenchError("display \(display) offers no MIT-SHM")
        }
        let id = shmget(0, size, IPC_CREAT | 0o600)
        guard id >= 0, let mapped = shmat(id, nil, 0), mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            xcb_disconnect(connection)
            throw BenchError("shmget/shmat failed: \(SystemErrorText.of())")
        }
        segment = xcb_generate_id(connection)
        let error = xcb_request_check(connection, xcb_shm_attach_checked(connection, segment, UInt32(id), 0))
        shmctl(id, IPC_RMID, nil)
        guard error == nil else {
            free(error)
            shmdt(mapped)
            xcb_disconnect(connection)
            throw BenchError("the X server cannot attach the segment (MIT-SHM)")
        }
        address = mapped
    }

    deinit {
        xcb_shm_detach(connection, segment)
        xcb_flush(connection)
        shmdt(address)
        xcb_disconnect(connection)
    }

    /// One full-screen grab (request and reply).
    func grab() throws {
        let cookie = xcb_shm_get_image(
            connection, root, 0, 0, UInt16(width), UInt16(height), ~0, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), segment, 0)
        guard let reply = xcb_shm_get_image_reply(connection, cookie, nil) else { throw BenchError("ShmGetImage failed") }
        let written = Int(reply.pointee.size)
        free(reply)
        guard written >= size else { throw BenchError("ShmGetImage wrote \(written) of \(size) bytes") }
    }

    /// The last grabbed screen, copied out of the segment.
    func image() throws -> BGRXImage {
        try BGRXImage(width: width, height: height, stride: width * 4, bytes: [UInt8](UnsafeRawBufferPointer(start: address, count: size)))
    }

    /// Grab time (ms, median over `runs` × several grabs each), then the BGRX JPEG encodes of the grabbed screen.
    static func measure(display: String, runs: Int) throws -> [Measurement] {
        let stage = try ShmCaptureStage(display: display)
        let label = "\(stage.height)p"
        let seconds = try (0...runs).map { _ in try timePerCall(minimumSeconds: 0.2) { try stage.grab() } }.dropFirst()
        var results = [Measurement(stage: "SHM capture \(stage.width)x\(stage.height)", unit: "ms", values: seconds.map { $0 * 1e3 })]
        results += try JPEGStages.encodeBGRX(runs: runs, image: try stage.image(), label: label)
        return results
    }
}
