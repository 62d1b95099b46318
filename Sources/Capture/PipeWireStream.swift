internal import CPipeWire
import Foundation
import Glibc
import Media
import PipeWireCursor
import ScreencastSupport
import Synchronization

/// One picture as PipeWire delivered it, borrowed for the length of the callback.
struct PipeWirePicture {
    /// The pixels (BGRx or BGRA; alpha ignored), valid only during the callback.
    var pixels: BGRXPixels
    /// What changed since the producer's previous buffer (its SPA_META_VideoDamage), in picture pixels; nil when
    /// the producer does not say (the whole picture).
    var damage: [CaptureRect]?
    /// When the buffer reached us, CLOCK_MONOTONIC µs.
    var receivedMicros: UInt64
}

/// The one owner of a PipeWire consumer of the portal's stream: `pw_thread_loop` (its own thread, `pw-data-loop`),
/// context, core (on the portal's file descriptor) and `pw_stream`, destroyed in ``stop()`` / `deinit`.
///
/// Format negotiation offers raw BGRx/BGRA of any size without a `modifier`, and buffers of type MemFd or MemPtr
/// only: shared memory, never dma-buf (no GPU to import it here). Buffers are mapped by PipeWire
/// (`PW_STREAM_FLAG_MAP_BUFFERS`); `onPicture` runs on the loop's thread with the newest one (older queued
/// ones are given back unread) and must copy what it needs.
///
/// With `cursorMetadata` (the portal's cursor mode METADATA) the buffers also carry SPA_META_Cursor: every buffer's
/// is read, in order, into a ``PointerState`` (a new picture comes only in some of them), and `onCursor` gets it
/// when the drawn pointer changed, also from buffers without pixels (Mutter sends those for a pointer move). A
/// refused cursor meta is logged (each distinct refusal once, up to 8) and leaves the pointer as it was.
///
/// `@unchecked Sendable`: the PipeWire objects are created and destroyed with the thread loop locked and
/// otherwise used only from its callbacks (which run with it locked); the rest is immutable or in a `Mutex`.
final class PipeWireStream: @unchecked Sendable {
    /// Why the stream ended.
    enum End: Sendable, Equatable {
        /// The producer went away or unlinked (the cast stopped: the output unplugged, the backend gone).
        case unlinked(String)
        /// PipeWire reported an error (a bad format, a stream error).
        case failed(String)
        /// The connection to the PipeWire daemon broke (the core's error event with -EPIPE: the daemon died or was
        /// restarted). The portal's session can be asked again once it is back.
        case daemonLost(String)
    }

    private let logger: Logger
    private let onPicture: (PipeWirePicture) -> Void
    private let onCursor: (PointerState) -> Void
    private let cursorMetadata: Bool
    private let onEnd: @Sendable (End) -> Void
    private let loop: OpaquePointer
    private var context: OpaquePointer?
    private var core: OpaquePointer?
    private var stream: OpaquePointer?
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let hook: UnsafeMutablePointer<spa_hook>
    private let coreEvents: UnsafeMutablePointer<pw_core_events>
    private let coreHook: UnsafeMutablePointer<spa_hook>
    private let stopped = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)
    /// Loop-thread state.
    private var format: (name: String, width: Int, height: Int)?
    private var streaming = false
    private var damageScratch = [Int32](repeating: 0, count: Int(CPW_MAX_DAMAGE) * 4)
    private var pointer = PointerState()
    private var cursorRefusals: Set<String> = []

    /// Connects to the PipeWire daemon over `fileDescriptor` (taken: closed by PipeWire) and asks for `node`;
    /// with `cursorMetadata`, for SPA_META_Cursor too (`onCursor`, on the loop's thread).
    /// - Throws: ``CaptureError/pipeWire(_:)``.
    init(
        fileDescriptor: Int32, node: UInt32, maxFramesPerSecond: Double, cursorMetadata: Bool = false, logger: Logger,
        onPicture: @escaping (PipeWirePicture) -> Void, onCursor: @escaping (PointerState) -> Void = { _ in },
        onEnd: @escaping @Sendable (End) -> Void
    ) throws(CaptureError) {
        pw_init(nil, nil)
        self.logger = logger
        self.onPicture = onPicture
        self.onCursor = onCursor
        self.cursorMetadata = cursorMetadata
        self.onEnd = onEnd
        guard let loop = pw_thread_loop_new("pw-data-loop", nil) else {
            close(fileDescriptor)
            throw .pipeWire("cannot make a thread loop")
        }
        self.loop = loop
        events = .allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        coreEvents = .allocate(capacity: 1)
        coreEvents.initialize(to: pw_core_events())
        coreHook = .allocate(capacity: 1)
        coreHook.initialize(to: spa_hook())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, _, state, error in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().stateChanged(state, error.map { String(cString: $0) })
        }
        events.pointee.param_changed = { data, id, param in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().paramChanged(id, param)
        }
        events.pointee.process = { data in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().process()
        }

        // From here on every stored property is set: a throw runs deinit, whose stop() destroys what exists.
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else {
            close(fileDescriptor)
            throw .pipeWire("cannot make a context")
        }
        self.context = context
        guard pw_thread_loop_start(loop) >= 0 else {
            close(fileDescriptor)
            throw .pipeWire("cannot start the thread loop")
        }
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        guard let core = pw_context_connect_fd(context, fileDescriptor, nil, 0) else {
            throw .pipeWire("cannot connect to the PipeWire daemon through the portal's remote (\(SystemErrorText.of()))")
        }
        self.core = core
        cpw_core_add_error_listener(core, coreHook, coreEvents, { data, id, _, res, message in
            Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().coreError(id, res, message.map { String(cString: $0) })
        }, Unmanaged.passUnretained(self).toOpaque())
        let properties = pw_properties_new_string("media.type=Video media.category=Capture media.role=Screen")
        guard let stream = pw_stream_new(core, "screencast-agent", properties) else {
            throw .pipeWire("cannot make a stream")
        }
        self.stream = stream
        pw_stream_add_listener(stream, hook, events, Unmanaged.passUnretained(self).toOpaque())
        var buffer = [UInt8](repeating: 0, count: 1024)
        var params: [UnsafePointer<spa_pod>?] = [nil]
        let fps = UInt32(max(1, min(240, maxFramesPerSecond.rounded(.up))))
        let count = cpw_build_format_params(&buffer, UInt32(buffer.count), &params, fps)
        // DONT_RECONNECT: when the producer's node goes (xdpw ends the cast or dies), WirePlumber unlinks us
        // instead of leaving the stream paused for another target; the stream turns unconnected and we end.
        let flags = pw_stream_flags(rawValue: PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_DONT_RECONNECT.rawValue)
        let result = params.withUnsafeMutableBufferPointer { list in
            pw_stream_connect(stream, SPA_DIRECTION_INPUT, node, flags, list.baseAddress, UInt32(count))
        }
        guard result >= 0 else { throw .pipeWire("cannot connect the stream to node \(node) (\(SystemErrorText.of(-result)))") }
    }

    deinit {
        stop()
        events.deallocate()
        hook.deallocate()
        coreEvents.deallocate()
        coreHook.deallocate()
    }

    /// Disconnects and destroys the stream, the core and the context, and ends the loop's thread. Idempotent;
    /// never call it from a callback of this stream.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pw_thread_loop_lock(loop)
        if let stream {
            spa_hook_remove(hook)
            pw_stream_disconnect(stream)
            pw_stream_destroy(stream)
            self.stream = nil
        }
        if let core {
            spa_hook_remove(coreHook)
            pw_core_disconnect(core)
            self.core = nil
        }
        pw_thread_loop_unlock(loop)
        pw_thread_loop_stop(loop)
        if let context {
            pw_context_destroy(context)
            self.context = nil
        }
        pw_thread_loop_destroy(loop)
    }

    // MARK: - Callbacks (the loop's thread, loop locked)

    private func stateChanged(_ state: pw_stream_state, _ error: String?) {
        let name = String(cString: pw_stream_state_as_string(state))
        logger.debug("pipewire stream state", ["state": name, "error": error ?? "-"])
        switch state {
        case PW_STREAM_STATE_STREAMING:
            if !streaming { logger.info("pipewire stream streaming", ["format": format?.name ?? "?", "size": format.map { "\($0.width)x\($0.height)" } ?? "?"]) }
            streaming = true
        case PW_STREAM_STATE_ERROR:
            end(.failed(error ?? "stream error"))
        case PW_STREAM_STATE_UNCONNECTED:
            end(.unlinked(error ?? "its producer removed it (the desktop stopped the cast, or its portal backend went away)"))
        case PW_STREAM_STATE_PAUSED where streaming:
            // The producer paused or went away (xdpw destroys its node when the cast ends).
            streaming = false
        default:
            break
        }
    }

    /// The core's error event: on the core itself with -EPIPE, the daemon is gone (it comes before the stream's
    /// own state change, which would read as the producer unlinking us).
    private func coreError(_ id: UInt32, _ res: Int32, _ message: String?) {
        logger.debug("pipewire core error", ["id": id, "res": res, "message": message ?? "-"])
        guard id == cpw_id_core(), res == -EPIPE else { return }
        end(.daemonLost(message ?? "connection to the PipeWire daemon lost"))
    }

    private func end(_ reason: End) {
        guard !stopped.load(ordering: .acquiring), !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        onEnd(reason)
    }

    private func paramChanged(_ id: UInt32, _ param: UnsafePointer<spa_pod>?) {
        guard id == SPA_PARAM_Format.rawValue, let param, let stream else { return }
        var raw: UInt32 = 0
        var width: UInt32 = 0
        var height: UInt32 = 0
        guard cpw_parse_video_format(param, &raw, &width, &height) == 0 else {
            end(.failed("the producer offered a format that is not raw video"))
            return
        }
        guard raw == SPA_VIDEO_FORMAT_BGRx.rawValue || raw == SPA_VIDEO_FORMAT_BGRA.rawValue, width > 0, height > 0 else {
            end(.failed("the producer chose video format \(raw) at \(width)x\(height); only BGRx or BGRA are read"))
            return
        }
        let name = cpw_video_format_name(raw).map { String(cString: $0) } ?? "\(raw)"
        format = (name, Int(width), Int(height))
        logger.info("pipewire format", ["format": name, "size": "\(width)x\(height)"])
        var buffer = [UInt8](repeating: 0, count: 1024)
        var params: [UnsafePointer<spa_pod>?] = [nil, nil, nil, nil]
        let count = cpw_build_buffer_params(&buffer, UInt32(buffer.count), &params, cursorMetadata ? 1 : 0)
        _ = params.withUnsafeMutableBufferPointer { pw_stream_update_params(stream, $0.baseAddress, UInt32(count)) }
    }

    private func process() {
        guard let stream else { return }
        // The newest buffer only: older ones go back unread (we are behind; their changes are in the newest
        // picture, but their damage is not: then the newest counts as whole).
        var newest: UnsafeMutablePointer<pw_buffer>?
        var skipped = false
        var cursorMoved = false
        while let next = pw_stream_dequeue_buffer(stream) {
            if cursorMetadata, readCursor(next) { cursorMoved = true }
            if let older = newest {
                pw_stream_queue_buffer(stream, older)
                skipped = true
            }
            newest = next
        }
        guard let buffer = newest else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        if cursorMoved { onCursor(pointer) }
        guard let format else { return }
        var data: UnsafePointer<UInt8>?
        var size: UInt32 = 0
        var stride: Int32 = 0
        var type: UInt32 = 0
        guard cpw_buffer_pixels(buffer, &data, &size, &stride, &type) == 0, let data else { return }
        let rowBytes = format.width * 4
        let pitch = stride > 0 ? Int(stride) : rowBytes
        guard pitch >= rowBytes, Int(size) >= pitch * (format.height - 1) + rowBytes else { return }  // an empty or short buffer
        var damage: [CaptureRect]?
        let count = damageScratch.withUnsafeMutableBufferPointer { cpw_buffer_damage(buffer, $0.baseAddress, CPW_MAX_DAMAGE) }
        if count > 0, !skipped {
            let screen = CaptureRect(x: 0, y: 0, width: format.width, height: format.height)
            var rects: [CaptureRect] = []
            for i in 0..<Int(count) {
                let x = Int(damageScratch[4 * i]), y = Int(damageScratch[4 * i + 1])
                let w = Int(damageScratch[4 * i + 2]), h = Int(damageScratch[4 * i + 3])
                let rect = CaptureRect(x: x, y: y, width: w, height: h).intersection(screen)
                if !rect.isEmpty { rects.append(rect) }
            }
            damage = rects
        }
        let pixels = BGRXPixels(base: UnsafeRawBufferPointer(start: data, count: Int(size)), width: format.width,
                                height: format.height, stride: pitch)
        onPicture(PipeWirePicture(pixels: pixels, damage: damage, receivedMicros: MonotonicClock.nowMicros()))
    }

    /// Applies a buffer's SPA_META_Cursor to ``pointer``; true when the drawn pointer changed.
    private func readCursor(_ buffer: UnsafeMutablePointer<pw_buffer>) -> Bool {
        var data: UnsafePointer<UInt8>?
        var size: UInt32 = 0
        guard cpw_buffer_cursor(buffer, &data, &size) == 0, let data else { return false }
        do throws(PipeWireCursorError) {
            return try pointer.apply(UnsafeRawBufferPointer(start: data, count: Int(size)))
        } catch {
            if cursorRefusals.count < 8, cursorRefusals.insert(error.description).inserted {
                logger.warning("cursor metadata refused", ["reason": error.description])
            }
            return false
        }
    }
}
