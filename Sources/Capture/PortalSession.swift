internal import CPortal
import Dispatch
import Foundation
import Glibc
import ScreencastSupport
import Synchronization

/// The one owner of an xdg-desktop-portal ScreenCast session (libportal's `XdpPortal` and `XdpSession`), with
/// the GLib main loop that serves it on a thread of its own (`portal-glib`).
///
/// ```
///  check the bus: ScreenCast.version ── no owner ──▶ portalMissing      (never a hang: 5 s D-Bus timeout)
///        │                             └─ no interface ─▶ portalMissing (no backend for this desktop)
///  CreateSession + SelectSources (monitor, cursor, persist_mode 2, restore token) ── refused ─▶ portalDenied
///        ▼
///  Start (the chooser, unless the token restores the choice) ── cancelled ──▶ portalDenied
///        ▼
///  OpenPipeWireRemote ──▶ node id + fd, the new restore token ──▶ Session::Closed ─▶ onClosed
/// ```
///
/// Every libportal and GLib call runs on the portal thread: setup linearly (iterating its main context until
/// each asynchronous call answers, a stop, or the step's time limit), then iterating it until ``close()``.
/// `@unchecked Sendable`: the GLib objects (`portal`, `session`) and the context's iteration are touched only by
/// that thread (``close()`` merely sets an atomic flag and calls `g_cancellable_cancel` and
/// `g_main_context_wakeup`, which GLib documents as callable from any thread); what the caller reads is behind
/// `Mutex`es and semaphores.
final class PortalSession: @unchecked Sendable {
    /// What a started session hands out.
    struct Started: Sendable {
        /// The PipeWire node of the chosen monitor.
        var node: UInt32
        /// A connection to the PipeWire daemon that may see only that node (ours to close).
        var fileDescriptor: Int32
        /// The stream's size when the portal says it (else 0).
        var width: Int
        var height: Int
        /// The token that restores this choice next time (persist_mode 2), when the portal gave one.
        var restoreToken: String?
        /// The cursor comes as metadata of the stream (cursor mode METADATA), to be drawn by us.
        var cursorMetadata = false
    }

    /// What the session is asked for.
    struct Request: Sendable {
        /// The cursor shown: as metadata of the stream when the portal offers that mode (AvailableCursorModes
        /// has METADATA, 4: GNOME, KDE), drawn by us; else drawn into the pictures by the compositor
        /// (`embedded`, 2: xdg-desktop-portal-wlr). False: left out (`hidden`).
        var embedsCursor = true
        /// A window instead of a monitor (SelectSources `types` = WINDOW: the chooser lists windows).
        var window = false
        /// The token of an earlier session: no chooser when the portal accepts it.
        var restoreToken: String?
        /// How long the portal may take to create the session and select the sources (no person involved).
        var setupSeconds = 20.0
        /// How long the chooser may wait for a person.
        var chooserSeconds = 300.0
        /// Cancels the waits from outside (the agent's SIGINT while the chooser is open).
        var cancellation: CaptureCancellation?
    }

    private let logger: Logger
    private let onClosed: @Sendable () -> Void
    private let context: OpaquePointer
    private let cancellable: UnsafeMutablePointer<GCancellable>
    private let result = Mutex<Result<Started, CaptureError>?>(nil)
    private let setupDone = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let closing = Atomic<Bool>(false)
    // Portal-thread state.
    private var portal: OpaquePointer?
    private var session: OpaquePointer?
    private var closedHandler: gulong = 0
    private var pending: OpaquePointer?
    private var sessionWasClosed = false

    /// Opens the session and starts it; returns once the PipeWire remote is open.
    /// - Parameters:
    ///   - onClosed: called once, on the portal thread, when the portal closes the session (Session::Closed:
    ///     the desktop's "stop sharing", the session revoked), never after ``close()``.
    /// - Throws: ``CaptureError/portalMissing(_:)``, ``CaptureError/portalDenied(_:)``,
    ///   ``CaptureError/portalFailed(_:)``.
    init(_ request: Request, logger: Logger, onClosed: @escaping @Sendable () -> Void) throws(CaptureError) {
        self.logger = logger
        self.onClosed = onClosed
        context = g_main_context_new()
        cancellable = g_cancellable_new()
        let thread = Thread { [self] in
            g_main_context_push_thread_default(context)
            let outcome = setUp(request)
            result.withLock { $0 = outcome }
            setupDone.signal()
            if case .success = outcome {
                // Not g_main_loop_run: a quit that came before it started would be lost.
                while !closing.load(ordering: .acquiring) { _ = g_main_context_iteration(context, 1) }
            }
            tearDown()
            g_main_context_pop_thread_default(context)
            finished.signal()
        }
        thread.name = "portal-glib"
        thread.start()
        setupDone.wait()
        switch result.withLock({ $0 })! {
        case .success: break
        case .failure(let error):
            finished.wait()
            finished.signal()
            throw error
        }
    }

    deinit {
        close()
        g_object_unref(UnsafeMutableRawPointer(cancellable))
        g_main_context_unref(context)
    }

    /// What the started session gave (valid after a successful `init`).
    var started: Started {
        guard case .success(let started) = result.withLock({ $0 }) else { preconditionFailure("a session that failed has nothing") }
        return started
    }

    /// Closes the portal session (Session.Close) and ends the portal thread; waits for it (bounded: a D-Bus
    /// call with a 2-s limit). Idempotent. Stop consuming the PipeWire stream first (xdpw 0.7.0 can crash
    /// when its session is closed under a streaming consumer).
    func close() {
        if !closing.exchange(true, ordering: .acquiringAndReleasing) {
            g_cancellable_cancel(cancellable)
            g_main_context_wakeup(context)
        }
        finished.wait()
        finished.signal()
    }

    // MARK: - The portal thread

    /// CreateSession → SelectSources → Start → OpenPipeWireRemote, each answer awaited on this thread.
    private func setUp(_ request: Request) -> Result<Started, CaptureError> {
        var error: UnsafeMutablePointer<GError>?
        guard let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable, &error) else {
            return .failure(.portalMissing("no D-Bus session bus (\(Self.take(error))); the portal lives on the desktop session's bus (DBUS_SESSION_BUS_ADDRESS)"))
        }
        defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
        var kind: gint = 0
        let version = cportal_screencast_version(bus, 5_000, &kind, &error)
        guard version > 0 else {
            let reason = Self.take(error)
            switch kind {
            case 1:
                return .failure(.portalMissing("xdg-desktop-portal is not on the session bus and cannot be started (\(reason)); install xdg-desktop-portal and the backend of your desktop (xdg-desktop-portal-gnome, -kde or -wlr)"))
            case 2:
                return .failure(.portalMissing("xdg-desktop-portal offers no ScreenCast interface (\(reason)); install the portal backend of your desktop (xdg-desktop-portal-gnome, -kde or -wlr) and make sure it runs"))
            default:
                return .failure(.portalMissing("the ScreenCast portal did not answer (\(reason))"))
            }
        }
        let sources = cportal_screencast_uint_property(bus, "AvailableSourceTypes", 5_000, nil)
        let cursors = cportal_screencast_uint_property(bus, "AvailableCursorModes", 5_000, nil)
        logger.info("screen-cast portal", ["version": version, "source_types": sources, "cursor_modes": cursors])
        if request.window, sources & Self.windowSourceType == 0 {
            return .failure(.portalMissing("the screen-cast portal offers no window sources (AvailableSourceTypes=\(sources): \(sources == 1 ? "monitors only, as xdg-desktop-portal-wlr, which shares whole outputs" : "no windows")); share the whole screen (without --window)"))
        }
        portal = xdp_portal_new()
        guard let portal else { return .failure(.portalFailed("libportal could not be set up")) }

        // CreateSession + SelectSources (libportal makes both calls).
        let metadata = request.embedsCursor && cursors & XDP_CURSOR_MODE_METADATA.rawValue != 0
        let cursor = metadata ? XDP_CURSOR_MODE_METADATA : request.embedsCursor ? XDP_CURSOR_MODE_EMBEDDED : XDP_CURSOR_MODE_HIDDEN
        logger.info("cursor mode", ["mode": metadata ? "metadata (drawn by the agent)" : request.embedsCursor ? "embedded (drawn by the compositor)" : "hidden"])
        let token = request.restoreToken
        let outputs = request.window ? XDP_OUTPUT_WINDOW : XDP_OUTPUT_MONITOR
        let ready: GAsyncReadyCallback = { _, result, data in
            let owner = Unmanaged<PortalSession>.fromOpaque(data!).takeUnretainedValue()
            owner.pending = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result)))
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        if let token {
            token.withCString {
                xdp_portal_create_screencast_session(portal, outputs, XDP_SCREENCAST_FLAG_NONE, cursor,
                                                     XDP_PERSIST_MODE_PERSISTENT, $0, cancellable, ready, me)
            }
        } else {
            xdp_portal_create_screencast_session(portal, outputs, XDP_SCREENCAST_FLAG_NONE, cursor,
                                                 XDP_PERSIST_MODE_PERSISTENT, nil, cancellable, ready, me)
        }
        guard let created = awaitPending(seconds: request.setupSeconds, step: "CreateSession/SelectSources", cancellation: request.cancellation) else {
            return .failure(timeoutOrStop("CreateSession/SelectSources", request.setupSeconds, request.cancellation))
        }
        session = xdp_portal_create_screencast_session_finish(portal, created, &error)
        g_object_unref(UnsafeMutableRawPointer(created))
        guard let session else { return .failure(Self.refusal("creating the screen-cast session", error)) }
        closedHandler = cportal_connect_closed(session, { _, data in
            let owner = Unmanaged<PortalSession>.fromOpaque(data!).takeUnretainedValue()
            owner.sessionClosed()
        }, me)

        // Start: the chooser (none when the restore token is accepted).
        logger.info(token == nil ? "asking the portal for a screen (its chooser may show)" : "asking the portal for the screen chosen before (restore token)")
        xdp_session_start(session, nil, cancellable, ready, me)
        guard let startResult = awaitPending(seconds: request.chooserSeconds, step: "Start", cancellation: request.cancellation) else {
            return .failure(timeoutOrStop("Start (the chooser)", request.chooserSeconds, request.cancellation))
        }
        let startedOK = xdp_session_start_finish(session, startResult, &error)
        g_object_unref(UnsafeMutableRawPointer(startResult))
        guard startedOK != 0 else { return .failure(Self.refusal("starting the screen cast", error)) }

        var node: UInt32 = 0
        var width: Int32 = 0
        var height: Int32 = 0
        guard cportal_first_stream(session, &node, &width, &height) != 0 else {
            return .failure(.portalFailed("the portal started the screen cast with no stream"))
        }
        let fd = xdp_session_open_pipewire_remote(session)
        guard fd >= 0 else { return .failure(.portalFailed("OpenPipeWireRemote gave no file descriptor")) }
        var restore: String?
        if let text = xdp_session_get_restore_token(session) {
            restore = String(cString: text)
            g_free(text)
        }
        logger.info("portal session started", [
            "node": node, "size": "\(width)x\(height)", "restore_token": restore == nil ? "none" : "new",
        ])
        return .success(Started(node: node, fileDescriptor: fd, width: Int(width), height: Int(height), restoreToken: restore,
                                cursorMetadata: metadata))
    }

    /// Iterates the main context until the asynchronous call answered (its result, referenced), a stop, or
    /// `seconds` passed (then the call is cancelled and nil returned).
    private func awaitPending(seconds: Double, step: String, cancellation: CaptureCancellation?) -> OpaquePointer? {
        var cancelled: Bool { cancellation?.isCancelled ?? false }
        pending = nil
        let deadline = MonotonicClock.nowMicros() + UInt64(seconds * 1e6)
        let begun = MonotonicClock.nowMicros()
        var told = false
        while pending == nil {
            if closing.load(ordering: .acquiring) || cancelled || MonotonicClock.nowMicros() >= deadline {
                g_cancellable_cancel(cancellable)
                // The cancelled call still answers (G_IO_ERROR_CANCELLED); drain it briefly so its callback's
                // reference is not left behind.
                let drainUntil = MonotonicClock.nowMicros() + 500_000
                while pending == nil, MonotonicClock.nowMicros() < drainUntil { _ = g_main_context_iteration(context, 0); usleep(5_000) }
                if let pending { g_object_unref(UnsafeMutableRawPointer(pending)) }
                pending = nil
                return nil
            }
            if g_main_context_iteration(context, 0) == 0 { usleep(5_000) }
            if !told, step == "Start", MonotonicClock.nowMicros() > begun + 2_000_000 {
                told = true
                logger.info("waiting for the portal (a chooser may be asking which screen to share)")
            }
        }
        return pending
    }

    private func timeoutOrStop(_ step: String, _ seconds: Double, _ cancellation: CaptureCancellation?) -> CaptureError {
        closing.load(ordering: .acquiring) || (cancellation?.isCancelled ?? false)
            ? .portalFailed("stopped while waiting for the portal's \(step)")
            : .portalFailed("the portal did not answer \(step) within \(Int(seconds)) s")
    }

    /// AvailableSourceTypes' bit for windows (org.freedesktop.portal.ScreenCast).
    static let windowSourceType: guint = 2

    /// The portal's Session::Closed.
    private func sessionClosed() {
        sessionWasClosed = true
        guard !closing.load(ordering: .acquiring) else { return }
        logger.info("the portal closed the screen-cast session")
        onClosed()
    }

    private func tearDown() {
        if let session {
            if closedHandler != 0 { cportal_disconnect(UnsafeMutableRawPointer(session), closedHandler) }
            if !sessionWasClosed {
                xdp_session_close(session)
                // Session.Close is sent without waiting for its reply: let it leave before the connection goes.
                let until = MonotonicClock.nowMicros() + 200_000
                while MonotonicClock.nowMicros() < until, g_main_context_iteration(context, 0) != 0 {}
            }
            g_object_unref(UnsafeMutableRawPointer(session))
            self.session = nil
        }
        if let portal {
            g_object_unref(UnsafeMutableRawPointer(portal))
            self.portal = nil
        }
    }

    /// A GError's message (and frees it).
    private static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "no reason given" }
        var buffer = [CChar](repeating: 0, count: 512)
        _ = cportal_take_error(error, &buffer, 512)
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A refused request: cancelled by the person (the chooser's Cancel) or failed.
    private static func refusal(_ step: String, _ error: UnsafeMutablePointer<GError>?) -> CaptureError {
        let cancelled = error.map { g_error_matches($0, g_io_error_quark(), gint(G_IO_ERROR_CANCELLED.rawValue)) != 0 } ?? false
        let reason = take(error)
        return cancelled
            ? .portalDenied("\(step): the request was cancelled (\(reason)); nothing was chosen in the portal's dialog, or it was refused")
            : .portalDenied("\(step) failed: \(reason)")
    }
}
