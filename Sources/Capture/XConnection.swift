internal import CXCB
import Foundation

/// The one owner of an `xcb_connection_t`: connects, checks the root window's pixel format and the
/// extensions capture needs (DAMAGE, XFIXES, RANDR ≥ 1.5 required; MIT-SHM optional), reads events, and
/// disconnects in `deinit`.
///
/// Not thread-safe: used only by the capture thread (or briefly by the thread that lists monitors).
final class XConnection {
    /// The connection handle (never nil; may be in an error state, see ``checkAlive()``).
    let handle: OpaquePointer
    /// The display name used (`$DISPLAY` resolved).
    let displayName: String
    /// The root window of the connection's screen.
    let root: xcb_window_t
    /// First event codes of the extensions (added to the extension's event number).
    private let damageFirstEvent: UInt8
    private let xfixesFirstEvent: UInt8
    private let randrFirstEvent: UInt8
    /// True when the server offers MIT-SHM (whether a segment can be attached is found out later).
    let hasSharedMemory: Bool

    /// Connects to `display` (nil: `$DISPLAY`) and checks what capture needs.
    /// - Throws: ``CaptureError/noDisplay``, ``CaptureError/cannotConnect(display:reason:)``,
    ///   ``CaptureError/unsupportedPixelFormat(depth:bitsPerPixel:detail:)``,
    ///   ``CaptureError/missingExtension(name:display:)``.
    init(display: String?) throws(CaptureError) {
        let name: String
        if let display, !display.isEmpty {
            name = display
        } else if let environment = ProcessInfo.processInfo.environment["DISPLAY"], !environment.isEmpty {
            name = environment
        } else {
            throw .noDisplay
        }
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(name, &screenNumber) else {
            throw .cannotConnect(display: name, reason: "out of memory")
        }
        let code = xcb_connection_has_error(connection)
        if code != 0 {
            xcb_disconnect(connection)
            throw .cannotConnect(display: name, reason: Self.connectionErrorText(code))
        }
        // From here on, a throw must disconnect: deinit does not run for a failed init.
        do throws(CaptureError) {
            let setup = xcb_get_setup(connection)!
            var screens = xcb_setup_roots_iterator(setup)
            for _ in 0..<max(0, Int(screenNumber)) { xcb_screen_next(&screens) }
            guard screens.rem > 0, let screenPointer = screens.data else {
                throw .cannotConnect(display: name, reason: "screen \(screenNumber) does not exist")
            }
            let screen = screenPointer.pointee
            try Self.checkPixelFormat(setup: setup, screen: screenPointer)
            let shm = cxcb_shm_extension(connection)
            let damage = cxcb_damage_extension(connection)
            let xfixes = cxcb_xfixes_extension(connection)
            let randr = cxcb_randr_extension(connection)
            guard let damage, damage.pointee.present != 0 else { throw .missingExtension(name: "DAMAGE", display: name) }
            guard let xfixes, xfixes.pointee.present != 0 else { throw .missingExtension(name: "XFIXES", display: name) }
            guard let randr, randr.pointee.present != 0 else { throw .missingExtension(name: "RANDR", display: name) }

            // Each extension must be told the version the client speaks before first use.
            let damageVersion = xcb_damage_query_version(connection, 1, 1)
            let xfixesVersion = xcb_xfixes_query_version(connection, 5, 0)
            let randrVersion = xcb_randr_query_version(connection, 1, 5)
            free(xcb_damage_query_version_reply(connection, damageVersion, nil))
            if let reply = xcb_xfixes_query_version_reply(connection, xfixesVersion, nil) {
                defer { free(reply) }
                guard reply.pointee.major_version >= 2 else {
                    throw .missingExtension(name: "XFIXES 2", display: name)
                }
            }
            guard let randrReply = xcb_randr_query_version_reply(connection, randrVersion, nil) else {
                throw .missingExtension(name: "RANDR", display: name)
            }
            let randrOK = randrReply.pointee.major_version > 1 || randrReply.pointee.minor_version >= 5
            free(randrReply)
            guard randrOK else { throw .missingExtension(name: "RANDR 1.5", display: name) }

            var sharedMemory = false
            if let shm, shm.pointee.present != 0 {
                let cookie = xcb_shm_query_version(connection)
                if let reply = xcb_shm_query_version_reply(connection, cookie, nil) {
                    sharedMemory = true
                    free(reply)
                }
            }

            let broken = xcb_connection_has_error(connection)
            if broken != 0 { throw .connectionLost(display: name, reason: Self.connectionErrorText(broken)) }
            // No throw after this point: once every property is set, a throw would run deinit as well.
            handle = connection
            displayName = name
            root = screen.root
            damageFirstEvent = damage.pointee.first_event
            xfixesFirstEvent = xfixes.pointee.first_event
            randrFirstEvent = randr.pointee.first_event
            hasSharedMemory = sharedMemory
        } catch {
            xcb_disconnect(connection)
            throw error
        }
    }

    deinit { xcb_disconnect(handle) }

    /// Throws ``CaptureError/connectionLost(display:reason:)`` once the connection is broken.
    func checkAlive() throws(CaptureError) {
        let code = xcb_connection_has_error(handle)
        guard code != 0 else { return }
        let reason = code == XCB_CONN_ERROR ? "the connection broke (X server gone?)" : Self.connectionErrorText(code)
        throw .connectionLost(display: displayName, reason: reason)
    }

    /// The connection's socket, for `poll`.
    var fileDescriptor: Int32 { xcb_get_file_descriptor(handle) }

    /// Sends buffered requests.
    func flush() { _ = xcb_flush(handle) }

    /// A round trip: returns once the server has handled every request sent before.
    /// - Returns: the sequence number of the round-trip request.
    @discardableResult
    func sync() throws(CaptureError) -> UInt32 {
        let cookie = xcb_get_input_focus(handle)
        free(try reply("GetInputFocus") { xcb_get_input_focus_reply(handle, cookie, $0) })
        return cookie.sequence
    }

    /// Waits for the reply to a request; an X error or a broken connection becomes a ``CaptureError``.
    /// The caller frees the reply with `free`.
    func reply<Reply>(
        _ request: String,
        _ fetch: (UnsafeMutablePointer<UnsafeMutablePointer<xcb_generic_error_t>?>) -> UnsafeMutablePointer<Reply>?
    ) throws(CaptureError) -> UnsafeMutablePointer<Reply> {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        if let reply = fetch(&error) { return reply }
        if let error {
            let code = Int(error.pointee.error_code)
            free(error)
            throw .requestFailed(request: request, errorCode: code)
        }
        try checkAlive()
        throw .requestFailed(request: request, errorCode: 0)
    }

    /// Sends a request that has no reply and waits for the server to confirm it (an X error becomes a
    /// ``CaptureError``).
    func check(_ request: String, _ cookie: xcb_void_cookie_t) throws(CaptureError) {
        if let error = xcb_request_check(handle, cookie) {
            let code = Int(error.pointee.error_code)
            free(error)
            throw .requestFailed(request: request, errorCode: code)
        }
        try checkAlive()
    }

    /// The root window's current size (it changes with RandR resizes).
    func rootSize() throws(CaptureError) -> (width: Int, height: Int) {
        let geometry = try reply("GetGeometry") { xcb_get_geometry_reply(handle, xcb_get_geometry(handle, root), $0) }
        defer { free(geometry) }
        return (Int(geometry.pointee.width), Int(geometry.pointee.height))
    }

    /// Asks for the events capture reacts to: root resizes and RandR layout changes. RandR 1.5 has no
    /// monitor event: `SetMonitor` and `DeleteMonitor` send the root a ConfigureNotify (X server
    /// `randr/rrmonitor.c`, `RRSendConfigNotify`), hence StructureNotify on the root; CRTC and output
    /// changes send RRScreenChangeNotify and RRNotify (RandR 1.2+ protocol, `RRSelectInput`).
    func selectScreenChangeEvents() throws(CaptureError) {
        let randrMask = XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE.rawValue | XCB_RANDR_NOTIFY_MASK_CRTC_CHANGE.rawValue
            | XCB_RANDR_NOTIFY_MASK_OUTPUT_CHANGE.rawValue
        try check("RRSelectInput", xcb_randr_select_input_checked(handle, root, UInt16(randrMask)))
        var mask = UInt32(XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue)
        try check("ChangeWindowAttributes", xcb_change_window_attributes_checked(handle, root, UInt32(XCB_CW_EVENT_MASK.rawValue), &mask))
    }

    /// A new X id (for a damage object, a shared-memory segment, …).
    func generateID() -> UInt32 { xcb_generate_id(handle) }

    /// The events capture understands, decoded from xcb's generic events.
    enum Event {
        /// DAMAGE: the bounding box of what changed (root coordinates), and the low 16 bits of the sequence
        /// number of this client's last request the server had handled when the change happened.
        case damage(CaptureRect, sequence: UInt16)
        /// The root window may have changed size, or RandR's layout (CRTCs, outputs, monitors) changed:
        /// RRScreenChangeNotify, RRNotify, or the root's ConfigureNotify.
        case screenChanged
        /// XFIXES: the displayed cursor changed shape.
        case cursorChanged
        /// An X error for a request that had no reply (the code), or an event nobody asked for.
        case error(Int)
        /// A window other than the root moved or changed size (ConfigureNotify): its geometry, x and y
        /// relative to its parent, the border left out.
        case windowConfigured(xcb_window_t, CaptureRect)
        /// A window was destroyed (DestroyNotify).
        case windowDestroyed(xcb_window_t)
        /// A window was unmapped (UnmapNotify: hidden, minimized) or mapped again (MapNotify).
        case windowUnmapped(xcb_window_t)
        case windowMapped(xcb_window_t)
        case other
    }

    /// The next event already received, or nil (never blocks; reads from the socket when nothing is queued).
    func pollEvent() -> Event? {
        guard let raw = xcb_poll_for_event(handle) else { return nil }
        defer { free(raw) }
        let type = raw.pointee.response_type & 0x7F
        if type == 0 {
            let code = raw.withMemoryRebound(to: xcb_generic_error_t.self, capacity: 1) { Int($0.pointee.error_code) }
            return .error(code)
        }
        if type == damageFirstEvent &+ UInt8(XCB_DAMAGE_NOTIFY) {
            let event = UnsafeRawPointer(raw).load(as: xcb_damage_notify_event_t.self)
            let area = event.area
            return .damage(CaptureRect(x: Int(area.x), y: Int(area.y), width: Int(area.width), height: Int(area.height)),
                           sequence: event.sequence)
        }
        if type == randrFirstEvent &+ UInt8(XCB_RANDR_SCREEN_CHANGE_NOTIFY) { return .screenChanged }
        if type == randrFirstEvent &+ UInt8(XCB_RANDR_NOTIFY) { return .screenChanged }
        if type == xfixesFirstEvent &+ UInt8(XCB_XFIXES_CURSOR_NOTIFY) { return .cursorChanged }
        if type == UInt8(XCB_CONFIGURE_NOTIFY) {
            let event = UnsafeRawPointer(raw).load(as: xcb_configure_notify_event_t.self)
            guard event.window != root else { return .screenChanged }
            return .windowConfigured(event.window, CaptureRect(x: Int(event.x), y: Int(event.y), width: Int(event.width), height: Int(event.height)))
        }
        if type == UInt8(XCB_DESTROY_NOTIFY) {
            return .windowDestroyed(UnsafeRawPointer(raw).load(as: xcb_destroy_notify_event_t.self).window)
        }
        if type == UInt8(XCB_UNMAP_NOTIFY) {
            return .windowUnmapped(UnsafeRawPointer(raw).load(as: xcb_unmap_notify_event_t.self).window)
        }
        if type == UInt8(XCB_MAP_NOTIFY) {
            return .windowMapped(UnsafeRawPointer(raw).load(as: xcb_map_notify_event_t.self).window)
        }
        return .other
    }

    /// The name of an atom (monitor names are atoms).
    func atomName(_ atom: xcb_atom_t) throws(CaptureError) -> String {
        let reply = try reply("GetAtomName") { xcb_get_atom_name_reply(handle, xcb_get_atom_name(handle, atom), $0) }
        defer { free(reply) }
        let length = Int(xcb_get_atom_name_name_length(reply))
        guard let bytes = xcb_get_atom_name_name(reply) else { return "" }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    // MARK: - Setup checks

    /// The root must be 24 or 32 deep, 32 bits per pixel, least significant byte first, with the
    /// TrueColor masks 0xff0000/0xff00/0xff: then a `ZPixmap` image is BGRX in memory.
    /// `screen` must point into the setup data: its depths and visuals follow it there.
    private static func checkPixelFormat(
        setup: UnsafePointer<xcb_setup_t>, screen screenPointer: UnsafeMutablePointer<xcb_screen_t>
    ) throws(CaptureError) {
        let screen = screenPointer.pointee
        let depth = Int(screen.root_depth)
        var bitsPerPixel = 0
        if let formats = xcb_setup_pixmap_formats(setup) {
            let count = Int(xcb_setup_pixmap_formats_length(setup))
            for index in 0..<count where Int(formats[index].depth) == depth {
                bitsPerPixel = Int(formats[index].bits_per_pixel)
            }
        }
        guard bitsPerPixel == 32, depth == 24 || depth == 32 else {
            throw .unsupportedPixelFormat(depth: depth, bitsPerPixel: bitsPerPixel, detail: "need 24-bit colour in 32-bit pixels")
        }
        guard setup.pointee.image_byte_order == UInt8(XCB_IMAGE_ORDER_LSB_FIRST.rawValue) else {
            throw .unsupportedPixelFormat(depth: depth, bitsPerPixel: bitsPerPixel, detail: "big-endian image byte order")
        }
        var depths = xcb_screen_allowed_depths_iterator(screenPointer)
        while depths.rem > 0 {
            var visuals = xcb_depth_visuals_iterator(depths.data)
            while visuals.rem > 0 {
                if let visual = visuals.data?.pointee, visual.visual_id == screen.root_visual {
                    guard visual.red_mask == 0xFF0000, visual.green_mask == 0xFF00, visual.blue_mask == 0xFF else {
                        throw .unsupportedPixelFormat(depth: depth, bitsPerPixel: bitsPerPixel, detail: String(
                            format: "colour masks r=%06x g=%06x b=%06x", visual.red_mask, visual.green_mask, visual.blue_mask))
                    }
                    return
                }
                xcb_visualtype_next(&visuals)
            }
            xcb_depth_next(&depths)
        }
    }

    /// xcb's `XCB_CONN_*` codes in words.
    static func connectionErrorText(_ code: Int32) -> String {
        switch code {
        case XCB_CONN_ERROR: "connection refused or broken (is the X server running?)"
        case XCB_CONN_CLOSED_EXT_NOTSUPPORTED: "an extension is not supported"
        case XCB_CONN_CLOSED_MEM_INSUFFICIENT: "out of memory"
        case XCB_CONN_CLOSED_REQ_LEN_EXCEED: "request too long"
        case XCB_CONN_CLOSED_PARSE_ERR: CaptureError.badDisplayNameReason
        case XCB_CONN_CLOSED_INVALID_SCREEN: "no such screen"
        case XCB_CONN_CLOSED_FDPASSING_FAILED: "file descriptor passing failed"
        default: "xcb error \(code)"
        }
    }
}
