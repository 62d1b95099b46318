import CTurboJPEG
import Capture
import Foundation
import Media
import ScreencastSupport
import Synchronization
import TestSupport
import XCTest
import XTestSupport

/// Pictures and measurements for the capture tests.
enum TestImages {
    /// A screen-like test picture: smooth gradients, solid panels and thin dark "text" lines, different
    /// everywhere (so a wrong crop or offset shows up as a low PSNR).
    static func pattern(width: Int, height: Int) -> BGRXImage {
        var image = BGRXImage(width: width, height: height)
        image.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    var r = 60 + Double(x) * 140 / Double(width)
                    var g = 60 + Double(y) * 140 / Double(height)
                    var b = 128 + 70 * sin(Double(x + 2 * y) / 60)
                    if (x / 40 + y / 30) % 5 == 0 { (r, g, b) = (240, 240, 230) }  // light panels
                    if (x / 40 + y / 30) % 5 == 0, y % 10 < 2, x % 40 > 4, x % 40 < 34 { (r, g, b) = (30, 30, 40) }  // "text"
                    let offset = (y * width + x) * 4
                    bytes[offset] = UInt8(max(0, min(255, b)))
                    bytes[offset + 1] = UInt8(max(0, min(255, g)))
                    bytes[offset + 2] = UInt8(max(0, min(255, r)))
                    bytes[offset + 3] = 0
                }
            }
        }
        return image
    }

    /// The `rect` part of `image`, as a new image.
    static func crop(_ image: BGRXImage, _ rect: CaptureRect) -> BGRXImage {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rect.width * rect.height * 4)
        for row in rect.y..<(rect.y + rect.height) {
            let start = row * image.stride + rect.x * 4
            bytes.append(contentsOf: image.bytes[start..<(start + rect.width * 4)])
        }
        return try! BGRXImage(width: rect.width, height: rect.height, stride: rect.width * 4, bytes: bytes)
    }

    /// Decodes a JPEG to BGRX with libturbojpeg (`tjDecompress2`).
    static func decode(_ jpeg: [UInt8]) throws -> BGRXImage {
        guard let handle = tjInitDecompress() else { throw XServerError(message: "tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0 else {
            throw XServerError(message: "not a JPEG")
        }
        var image = BGRXImage(width: Int(width), height: Int(height))
        let status = image.withUnsafeMutableBytes { out in
            tjDecompress2(handle, jpeg, UInt(jpeg.count), out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                          width, width * 4, height, Int32(TJPF_BGRX.rawValue), 0)
        }
        guard status == 0 else { throw XServerError(message: "tjDecompress2 failed") }
        return image
    }

    /// PSNR in dB over the R, G and B samples of two same-sized pictures (infinity when identical).
    static func psnr(_ a: BGRXImage, _ b: BGRXImage) -> Double { rgbPSNR(a, b) }
}

/// Collects a capture's frames (delivered on the capture thread) for a test to wait on and inspect.
final class FrameCollector: Sendable {
    private let frames = Mutex<[CapturedFrame]>([])

    func add(_ frame: CapturedFrame) { frames.withLock { $0.append(frame) } }

    var all: [CapturedFrame] { frames.withLock { $0 } }

    /// Waits until `condition` holds for the frames so far, or `timeout` seconds pass.
    @discardableResult
    func wait(timeout: Double, until condition: ([CapturedFrame]) -> Bool) -> [CapturedFrame] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let now = all
            if condition(now) { return now }
            usleep(10_000)
        }
        return all
    }

    /// Waits for at least `count` frames.
    @discardableResult
    func wait(count: Int, timeout: Double = 10) -> [CapturedFrame] {
        wait(timeout: timeout) { $0.count >= count }
    }
}

/// Base class for tests that need an X server: one per test, started in `setUp` with the kind and size the
/// test class asks for; stopped in `tearDown`, with a check that no capture thread outlived the test (its
/// X connections close before the thread ends). A watchdog aborts a test that hangs for a minute.
/// (No socket-descriptor check: Foundation's `Process` keeps a socket per child it started.)
class XServerTestCase: XCTestCase {
    var serverKind: XServerProcess.Kind { .xvfb }
    var screenSize: (width: Int, height: Int) { (320, 240) }
    /// Seconds a test may run before the watchdog aborts the process (a hung test must not stall the suite).
    var timeLimit: Double { 60 }

    private(set) var server: XServerProcess!
    private(set) var client: XTestClient!
    let logs = LogLines()
    private var watchdog: DispatchSemaphore?

    override func setUpWithError() throws {
        try super.setUpWithError()
        let done = DispatchSemaphore(value: 0)
        let name = name
        let limit = timeLimit
        Thread.detachNewThread {
            if done.wait(timeout: .now() + limit) == .timedOut {
                FileHandle.standardError.write(Data("watchdog: \(name) ran past \(Int(limit)) s; aborting\n".utf8))
                abort()
            }
        }
        watchdog = done
        server = try XServerProcess(serverKind, width: screenSize.width, height: screenSize.height)
        client = try XTestClient(display: server.display)
    }

    override func tearDown() {
        client = nil
        let deadline = Date().addingTimeInterval(3)
        while Self.threadNames().contains("screen-capture"), Date() < deadline { usleep(10_000) }
        XCTAssertFalse(Self.threadNames().contains("screen-capture"), "a capture thread outlived the test")
        server?.stop()
        server = nil
        watchdog?.signal()
        if testRun.map({ $0.failureCount + $0.unexpectedExceptionCount > 0 }) ?? false {
            print("--- logs of \(name) ---\n" + logs.lines.joined(separator: "\n"))
        }
        super.tearDown()
    }

    /// A configuration for this test's display: defaults, but no cursor unless asked (the default X cursor
    /// would sit in the middle of the picture).
    func configuration(_ change: (inout CaptureConfiguration) -> Void = { _ in }) -> CaptureConfiguration {
        var configuration = CaptureConfiguration()
        configuration.display = server.display
        configuration.drawsCursor = false
        change(&configuration)
        return configuration
    }

    /// Starts a capture that collects its frames.
    func startCapture(_ configuration: CaptureConfiguration) throws -> (ScreenCapture, FrameCollector) {
        let collector = FrameCollector()
        let capture = try ScreenCapture(
            configuration: configuration, logger: Logger(component: "capture", threshold: .debug, output: logs.output),
            onFrame: { collector.add($0) })
        return (capture, collector)
    }

    /// Captures one frame of `configuration` and stops.
    func captureOne(_ configuration: CaptureConfiguration) throws -> CapturedFrame {
        let (capture, collector) = try startCapture(configuration)
        let frames = collector.wait(count: 1)
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        return try XCTUnwrap(frames.first, "no frame within 10 s")
    }
}

extension XServerTestCase {
    /// Names of this process's threads (`/proc/self/task/*/comm`).
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

}

/// Log lines kept in memory (printed when a test fails).
final class LogLines: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    var output: LogOutput { LogOutput { [self] line in storage.withLock { $0.append(line) } } }
}
