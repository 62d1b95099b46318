import Foundation
import FrameSocket
import FrameWire
import Glibc
import Media
import ScreencastSupport
import Synchronization
import TestSupport
import VideoSource
import XCTest

/// A sink that keeps every frame with the time it arrived (µs, CLOCK_MONOTONIC).
final class CollectingSink: VideoSink {
    private let state = Mutex<(frames: [(EncodedFrame, UInt64)], finished: Int)>(([], 0))
    /// Sleeps this long in every `consume` (a slow consumer blocks the encoder thread).
    let delayMicros: UInt32

    init(delayMicros: UInt32 = 0) { self.delayMicros = delayMicros }

    func consume(_ frame: EncodedFrame) {
        state.withLock { $0.frames.append((frame, MonotonicClock.nowMicros())) }
        if delayMicros > 0 { usleep(delayMicros) }
    }

    func finish() { state.withLock { $0.finished += 1 } }

    var frames: [EncodedFrame] { state.withLock { $0.frames.map(\.0) } }
    var arrivals: [UInt64] { state.withLock { $0.frames.map(\.1) } }
    var finishCount: Int { state.withLock { $0.finished } }
}

/// Log lines captured in memory.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    /// Echo to stderr too (for failures that need the log).
    let echo: Bool

    init(echo: Bool = false) { self.echo = echo }

    var logger: Logger {
        Logger(component: "test", threshold: .debug, output: LogOutput { [self] line in
            lines.withLock { $0.append(line) }
            if echo { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        })
    }

    var all: [String] { lines.withLock { $0 } }
    func count(_ text: String) -> Int { all.filter { $0.contains(text) }.count }
}

/// Polls `condition` every 10 ms for up to `timeout` seconds.
@discardableResult
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// A light "desktop" picture with dark text-like rows; `variant` moves a dark window so pictures differ.
/// BT.601 full range (what a JPEG decodes to: JPEG and full-range I420 wire material).
func makeDesktop(width: Int, height: Int, variant: Int) -> I420Buffer {
    var picture = I420Buffer(width: width, height: height, colorSpace: .bt601Full)
    let (ys, uvs, cw, ch) = (picture.yStride, picture.uvStride, picture.chromaWidth, picture.chromaHeight)
    picture.withUnsafeMutablePlanes { y, u, v in
        for row in 0..<height {
            for col in 0..<width {
                var value: UInt8 = 220
                if row % 10 < 6, (col / 4 + row / 10 + variant) % 3 != 0 { value = 40 }
                let wx = (variant * 37) % max(1, width / 2)
                if col >= wx, col < wx + width / 3, row >= height / 3, row < height / 3 + height / 4 { value = 90 }
                y[row * ys + col] = value
            }
        }
        for row in 0..<ch { for col in 0..<cw { u[row * uvs + col] = 128; v[row * uvs + col] = UInt8(110 + variant % 40) } }
    }
    return picture
}

/// One wire message: `picture` as a JPEG with the given header fields.
func message(
    _ picture: I420Buffer, bufferWidth: Int? = nil, bufferHeight: Int? = nil, orientation: Int = 1,
    timestamp: UInt64? = nil, quality: Int = 90
) throws -> [UInt8] {
    let jpeg = try JPEGEncoder().encode(picture, quality: quality)
    let header = FrameHeader(
        contentLength: jpeg.count, bufferWidth: bufferWidth ?? picture.width, bufferHeight: bufferHeight ?? picture.height,
        orientation: orientation, timestampMicros: timestamp)
    return FrameEncoder.encode(header: header, body: jpeg)
}

/// Base class: a short temp folder, a socket path in it, and a time limit per test.
class VideoSourceTestCase: XCTestCase {
    var folder: TemporaryDirectory!
    var socketPath: SocketPath!

    override func setUpWithError() throws {
        folder = try TemporaryDirectory(prefix: "vs")
        socketPath = try SocketPath(folder.path("a.sock"))
    }

    override func tearDown() {
        folder?.remove()
    }

    /// A quiet logger, or the capture's.
    func logger(_ capture: LogCapture? = nil) -> Logger {
        capture?.logger ?? Logger(component: "test", threshold: .error)
    }

    func sender() throws -> FrameSender {
        try FrameSender(path: socketPath, logger: Logger(component: "sender", threshold: .error))
    }
}

/// A raw client socket that connects and sends only what it is told to (a silent or stalled sender).
final class RawClient {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
    }

    func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }

    /// True when the server closed the connection (a read returns 0 or fails), waiting up to `timeout` s.
    func waitForClose(timeout: Double) -> Bool {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, 1, Int32(timeout * 1000)) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }

    deinit { close(fd) }
}
