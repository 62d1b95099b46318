import Foundation
import FrameWire
import Media
import Synchronization
import TestSupport
import XCTest

/// A `screencast-call` process under test: its stderr is collected line by line while it runs.
final class RunningCall: @unchecked Sendable {
    // @unchecked Sendable: `process` and `lines` are set in init and only read afterwards.
    let process: Process
    private let lines: PipeLines

    init(_ arguments: [String]) throws {
        let pipe = Pipe()
        process = try ProcessRunner.start(TestPaths.executable("screencast-call"), arguments, stderr: pipe)
        lines = PipeLines(pipe)
    }

    var log: [String] { lines.all }
    var logText: String { log.joined(separator: "\n") }

    /// Waits for a log line containing `text` (the `occurrence`-th one); returns it, or nil on timeout.
    func waitForLine(_ text: String, occurrence: Int = 1, timeout: Double = 10) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let matches = log.filter { $0.contains(text) }
            if matches.count >= occurrence { return matches[occurrence - 1] }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit (killing after `timeout`); returns the status, nil when it had to be killed.
    func waitForExit(timeout: Double = 10) -> Int32? {
        let killed = ProcessRunner.wait(for: process, timeout: timeout)
        lines.waitUntilClosed()
        return killed ? nil : ProcessRunner.status(of: process)
    }

    deinit {
        if ProcessRunner.isRunning(process) { kill(process.processIdentifier, SIGKILL); _ = ProcessRunner.wait(for: process, timeout: 10) }
    }
}

/// Replays a dump into `socket` with `screencast-dump replay` (paced by its timestamps unless `extra`
/// says otherwise) and waits for it to finish.
@discardableResult
func replay(_ dump: String, socket: String, _ extra: [String] = []) throws -> ProcessResult {
    try ProcessRunner.run(TestPaths.executable("screencast-dump"), ["replay", dump, "--socket", socket] + extra, timeout: 60)
}

/// A light "desktop" with dark text-like rows and a window whose place depends on `variant`, in BT.601
/// full range (JPEG material).
func makeDesktop(width: Int, height: Int, variant: Int) -> I420Buffer {
    var picture = I420Buffer(width: width, height: height, colorSpace: .bt601Full)
    let (ys, uvs, cw, ch) = (picture.yStride, picture.uvStride, picture.chromaWidth, picture.chromaHeight)
    picture.withUnsafeMutablePlanes { y, u, v in
        for row in 0..<height {
            for col in 0..<width {
                var value: UInt8 = 225
                let line = row / 12
                if row % 12 < 8, col > 6, col < width - 6, (col / 5 * 7 + line * 13 + variant * 3) % 11 > 3,
                   col % 5 != 4, (row % 12) % 3 != 2 {
                    value = 35
                }
                let wx = 20 + (variant * 47) % max(1, width / 2)
                let wy = 30 + (variant * 23) % max(1, height / 2)
                if col >= wx, col < wx + width / 3, row >= wy, row < wy + height / 3 {
                    value = UInt8(70 + (col - wx + row - wy) % 60)
                }
                if row < 14 { value = 60 }  // title bar
                y[row * ys + col] = value
            }
        }
        for row in 0..<ch {
            for col in 0..<cw {
                u[row * uvs + col] = row < 7 ? 160 : 128
                v[row * uvs + col] = row < 7 ? 100 : UInt8(120 + variant % 16)
            }
        }
    }
    return picture
}

/// One frame of a generated dump.
struct DumpFrame {
    var picture: I420Buffer
    var orientation: Int = 1
    /// Buffer-Timestamp, µs.
    var timestamp: UInt64
    /// The body: JPEG (the default) or the picture's own I420 bytes.
    var format: BufferFormat = .jpeg
}

/// The wire bytes of `frames` as `screencast-agent` would write them: JPEG quality 90, 4:2:0, or for
/// `.i420` frames the picture's bytes as they are (`--format i420`).
func makeDump(_ frames: [DumpFrame]) throws -> [UInt8] {
    let encoder = try JPEGEncoder()
    var out: [UInt8] = []
    for (index, frame) in frames.enumerated() {
        let body = frame.format == .i420 ? frame.picture.bytes : try encoder.encode(frame.picture, quality: 90)
        let header = FrameHeader(
            contentLength: body.count, bufferWidth: frame.picture.width, bufferHeight: frame.picture.height,
            orientation: frame.orientation, timestampMicros: frame.timestamp, sequence: UInt64(index),
            format: frame.format)
        out += FrameEncoder.encode(header: header, body: body)
    }
    return out
}

/// Clockwise rotation by index arithmetic (independent of libyuv), luma and chroma.
func rotateClockwise(_ picture: I420Buffer, degrees: Int) -> I420Buffer {
    guard degrees % 360 != 0 else { return picture }
    let swap = degrees == 90 || degrees == 270
    var out = I420Buffer(width: swap ? picture.height : picture.width, height: swap ? picture.width : picture.height, colorSpace: picture.colorSpace)
    func map(_ r: Int, _ c: Int, _ w: Int, _ h: Int) -> (Int, Int) {
        switch degrees {
        case 90: (c, h - 1 - r)
        case 180: (h - 1 - r, w - 1 - c)
        default: (w - 1 - c, r)  // 270
        }
    }
    let (w, h, cw, ch) = (picture.width, picture.height, picture.chromaWidth, picture.chromaHeight)
    let (ows, ouvs) = (out.yStride, out.uvStride)
    out.withUnsafeMutablePlanes { y, u, v in
        for r in 0..<h { for c in 0..<w { let (dr, dc) = map(r, c, w, h); y[dr * ows + dc] = picture.bytes[r * picture.yStride + c] } }
        let (us, vs) = (picture.uOffset, picture.vOffset)
        for r in 0..<ch {
            for c in 0..<cw {
                let (dr, dc) = map(r, c, cw, ch)
                u[dr * ouvs + dc] = picture.bytes[us + r * picture.uvStride + c]
                v[dr * ouvs + dc] = picture.bytes[vs + r * picture.uvStride + c]
            }
        }
    }
    return out
}

/// The IVF header's length for frames at `pts` (timebase units, the first 0): the last pts plus one period;
/// 0 for no frame.
func ivfLength(_ pts: [UInt64]) -> UInt32 {
    guard let last = pts.last else { return 0 }
    return UInt32(last + 1)
}

/// The stats JSON written with --stats-file.
func readStats(_ path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// ffprobe's count of decodable frames and its error output, or nil when ffprobe is not installed.
func ffprobeFrames(_ path: String) throws -> (count: Int, errors: String)? {
    let candidates = ["/usr/bin/ffprobe", "/usr/local/bin/ffprobe"]
    guard let ffprobe = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
    let result = try ProcessRunner.run(URL(fileURLWithPath: ffprobe), [
        "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames,codec_name",
        "-of", "default=noprint_wrappers=1", path,
    ], timeout: 60)
    let count = result.stdout.split(separator: "\n").compactMap { line -> Int? in
        line.hasPrefix("nb_read_frames=") ? Int(line.dropFirst("nb_read_frames=".count)) : nil
    }.first ?? -1
    return (count, result.stderr)
}

/// Base class: a short temp folder per test and a check that the call removed its socket.
class CallTestCase: XCTestCase {
    var folder: TemporaryDirectory!
    var socket: String { folder.path("a.sock") }

    override func setUpWithError() throws {
        folder = try TemporaryDirectory(prefix: "call")
    }

    override func tearDown() {
        folder?.remove()
    }

    /// Starts a call on this test's socket and waits until it listens. Without `--http` in `extra` it serves
    /// no page (`--http off`), so no test depends on port 8080 being free.
    func startCall(_ extra: [String], file: StaticString = #filePath, line: UInt = #line) throws -> RunningCall {
        let http = extra.contains("--http") ? [] : ["--http", "off"]
        let call = try RunningCall(["--socket", socket] + http + extra)
        XCTAssertNotNil(call.waitForLine("listening", timeout: 10), "call did not start:\n\(call.logText)", file: file, line: line)
        return call
    }
}
