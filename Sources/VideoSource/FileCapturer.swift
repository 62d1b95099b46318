import Foundation
import FrameWire
import Glibc
import Media
import ScreencastSupport
import Synchronization

/// Plays a `.frames` dump into the hub while its source is active, on a thread of its own: each frame's
/// JPEG (or raw I420 body) is decoded and rotated like a screen frame (`WireFramePipeline`), paced by the dump's
/// `Buffer-Timestamp` gaps (clamped to 1 ms…5 s; 1/30 s where a frame has none), and stamped with the
/// clock's time (a replay is a new capture). Loops, or ends after one pass and calls `onEnded`.
///
/// With `onSound`, the dump's sound messages (Protocol/frame-wire.md §2.10) play too, in file order between
/// the pictures and paced by the same timestamps (`Sound-Timestamp` beside `Buffer-Timestamp`), each
/// re-stamped with the time it was due on the clock (as the pictures are), so the call's audio source hears
/// the recorded sound in step with the recorded pictures.
final class FileCapturer: Sendable {
    /// One message of the dump, in file order.
    enum Item: Sendable {
        case picture(Frame)
        case sound(SoundMessage)

        /// Its capture time in the dump, µs (nil: a picture without `Buffer-Timestamp`).
        var timestampMicros: UInt64? {
            switch self {
            case .picture(let frame): frame.header.timestampMicros
            case .sound(let sound): sound.header.timestampMicros
            }
        }
    }

    private let hub: SourceHub
    private let clock: any VideoClock
    private let logger: Logger
    private let path: String
    private let loop: Bool
    private let frames: [Frame]
    /// Pictures and (with `onSound`) sound, in file order.
    private let items: [Item]
    private let onSound: SoundOutlet?
    private let maximumDimension: Int
    private let maximumDecodePixels: Int
    private let gate = ActivityGate()
    private let stopSignal = StopSignal()
    private let done = Mutex<DispatchSemaphoreBox?>(nil)
    private let onEnded: @Sendable () -> Void

    /// Reads and parses the whole dump.
    /// - Throws: `VideoSourceError.unreadableDump` (missing or unreadable file, a directory, a FIFO or a
    ///   device, no complete frame), `.emptyDump` (no frame decodes within the decode budget).
    init(
        path: String, loop: Bool, hub: SourceHub, clock: any VideoClock, logger: Logger, maximumDimension: Int,
        maximumDecodePixels: Int, onEnded: @escaping @Sendable () -> Void, onSound: SoundOutlet? = nil
    ) throws(VideoSourceError) {
        let bytes = try Self.readDump(path)
        guard !bytes.isEmpty else { throw .unreadableDump(path: path, reason: "the file is empty") }
        var decoder = FrameDecoder()
        var frames: [Frame] = []
        var items: [Item] = []
        var end: FrameStreamEnd?
        decoder.feed(bytes) { event in
            switch event {
            case .frame(let frame):
                frames.append(frame)
                items.append(.picture(frame))
            case .sound(let sound): if onSound != nil { items.append(.sound(sound)) }
            case .end(let reason): end = reason
            }
        }
        decoder.finish { event in if case .end(let reason) = event { end = end ?? reason } }
        guard !frames.isEmpty else {
            throw .unreadableDump(path: path, reason: "no complete frame (\(end?.description ?? "empty"))")
        }
        if let end, end != .eof {
            logger.warning("dump ends badly; playing the frames before", ["path": path, "end": end, "frames": frames.count])
        }
        // At least one frame must decode, or there is nothing to show.
        do {
            let probe = try JPEGDecoder(maximumDimension: maximumDimension)
            guard frames.contains(where: { frame in
                frame.header.format == .i420
                    ? frame.header.bufferWidth * frame.header.bufferHeight <= maximumDecodePixels  // its length is checked by the wire decoder
                    : (try? probe.readHeader(frame.body)).map { $0.width * $0.height <= maximumDecodePixels } ?? false
            }) else { throw VideoSourceError.emptyDump(path: path) }
        } catch let error as VideoSourceError {
            throw error
        } catch {
            throw .unreadableDump(path: path, reason: "\(error)")
        }
        self.path = path
        self.loop = loop
        self.frames = frames
        self.items = items
        self.onSound = onSound
        self.hub = hub
        self.clock = clock
        self.logger = logger
        self.maximumDimension = maximumDimension
        self.maximumDecodePixels = maximumDecodePixels
        self.onEnded = onEnded
    }

    /// The whole file: a regular file only (a FIFO would block, a directory or device is no dump).
    /// - Throws: `VideoSourceError.unreadableDump` with `strerror` (or what the path is instead of a file).
    static func readDump(_ path: String) throws(VideoSourceError) -> [UInt8] {
        func failure(_ code: Int32) -> VideoSourceError { .unreadableDump(path: path, reason: SystemErrorText.of(code)) }
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw failure(errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(errno) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw failure(EISDIR)
        case S_IFIFO: throw .unreadableDump(path: path, reason: "not a regular file (a FIFO)")
        case S_IFCHR, S_IFBLK: throw .unreadableDump(path: path, reason: "not a regular file (a device)")
        case S_IFSOCK: throw .unreadableDump(path: path, reason: "not a regular file (a socket)")
        default: throw .unreadableDump(path: path, reason: "not a regular file")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(0, info.st_size)))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// Frames in the dump.
    var frameCount: Int { frames.count }

    func start() {
        let semaphore = BackgroundThread.start(name: "file-source") { [self] in run() }
        done.withLock { $0 = DispatchSemaphoreBox(semaphore) }
    }

    func setActive(_ active: Bool) { gate.set(active) }

    func stop() {
        stopSignal.stop()
        done.withLock { $0.take() }?.semaphore.wait()
    }

    /// The wait before item `index` (µs), from the dump's timestamps: 1 ms…5 s; 1/30 s where either has
    /// none or they do not rise; none between a picture and sound stamped at the same time or before it (the
    /// agent writes a picture and the sound played meanwhile back to back).
    static func gap(before index: Int, in items: [Item]) -> UInt64 {
        guard index > 0, let previous = items[index - 1].timestampMicros, let current = items[index].timestampMicros else { return 33_333 }
        let mixed: Bool
        switch (items[index - 1], items[index]) {
        case (.picture, .picture): mixed = false
        default: mixed = true
        }
        guard current > previous else { return mixed ? 0 : 33_333 }
        return min(5_000_000, max(mixed ? 0 : 1_000, current - previous))
    }

    private func run() {
        guard let pipeline = try? WireFramePipeline(
            pool: hub.pool, logger: logger, maximumDimension: maximumDimension, maximumDecodePixels: maximumDecodePixels
        ) else {
            logger.error("file source cannot create a JPEG decoder", ["path": path])
            return
        }
        var index = 0
        var due = clock.nowMicros()
        var passes = 0
        while gate.waitUntilActive(or: stopSignal) {
            let now = clock.nowMicros()
            if now < due {
                if stopSignal.sleep(micros: min(due - now, 100_000)) { break }
                continue
            }
            switch items[index] {
            case .picture(let frame): deliver(frame, pipeline: pipeline, index: index, passes: passes)
            case .sound(var sound):
                sound.header.timestampMicros = due  // a replay is a new capture: stamped when it was due
                onSound?(sound.header, sound.body)
            }
            index += 1
            if index == items.count {
                index = 0
                passes += 1
                if !loop {
                    logger.info("file source ended", ["path": path, "frames": frames.count])
                    onEnded()
                    return
                }
            }
            let gap = Self.gap(before: index, in: items)
            due = now - due > gap ? now + gap : due + gap
        }
    }

    /// Decodes picture `index` of the dump and hands it to the hub, stamped now.
    private func deliver(_ frame: Frame, pipeline: WireFramePipeline, index: Int, passes: Int) {
        let now = clock.nowMicros()
        hub.stats.received()
        switch pipeline.process(frame, captureTimestampMicros: now) {
        case .success(let picture):
            hub.stats.decoded()
            hub.submit(picture, from: .file)
        case .failure(.tooLarge):
            hub.stats.dropped(.tooLarge)  // the pipeline logs it
        case .failure(.decode(let error)):
            hub.stats.dropped(.decodeError)
            if passes == 0 { logger.warning("dump frame does not decode", ["index": index, "error": error]) }
        case .failure(let failure):
            hub.stats.dropped(.decodeError)
            if passes == 0 { logger.warning("dump frame does not decode", ["index": index, "error": failure]) }
        }
    }
}
