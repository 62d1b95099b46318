@testable import Capture
import Foundation
import Glibc
import PipeWireCursor
import ScreencastSupport
import Synchronization
import TestSupport
import XCTest

/// The cursor metadata through real PipeWire: a producer written against libpipewire
/// (`Tests/Fixtures/pipewire/cursor-producer.c`: 64×48 BGRx of 0x40, SPA_META_Cursor at (20, 10), hotspot (1, 1), a
/// 16×16 RGBA arrow in every other buffer) on the test desktop's PipeWire daemon; ``PipeWireStream`` negotiates the
/// cursor meta with it (cursor mode METADATA) and feeds a ``PortalStaging`` as ``PortalShare`` does; the pointer is
/// then drawn over the staged picture with ``CursorOverlay``'s blend, as ``PortalCaptureLoop`` does.
final class PipeWireCursorTests: XCTestCase {
    private var desktop: WaylandDesktop!
    private var folder: TemporaryDirectory!
    private var producer: Process?

    override func setUpWithError() throws {
        folder = try TemporaryDirectory(prefix: "sc-pwcursor")
        desktop = try WaylandDesktop()
    }

    override func tearDown() {
        if let producer { _ = ProcessRunner.terminate(producer) }
        desktop?.down()
        folder?.remove()
    }

    func testTheCursorMetaOfARealProducerIsReadKeptAndDrawn() throws {
        let source = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/pipewire/cursor-producer.c").path
        let binary = folder.path("cursor-producer")
        let built = try ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"),
                                          ["-c", "cc -o '\(binary)' '\(source)' $(pkg-config --cflags --libs libpipewire-0.3)"])
        XCTAssertEqual(built.status, 0, "cc: \(built.stderr)")
        let out = Pipe()
        let lines = PipeLines(out)
        producer = try ProcessRunner.start(URL(fileURLWithPath: binary), [], stdout: out, environment: desktop.environment)
        var node: UInt32?
        let deadline = Date().addingTimeInterval(10)
        while node == nil, Date() < deadline {
            node = lines.all.lazy.compactMap { $0.hasPrefix("node ") ? UInt32($0.dropFirst(5)) : nil }.first
            if node == nil { usleep(20_000) }
        }
        let producerNode = try XCTUnwrap(node, "the producer printed no node id in 10 s")

        let runtime = try XCTUnwrap(desktop.environment["XDG_RUNTIME_DIR"])
        let staging = try PortalStaging()
        let pointers = Mutex(0)
        let pictures = Mutex(0)
        let ended = Mutex<PipeWireStream.End?>(nil)
        let stream = try PipeWireStream(
            fileDescriptor: try connectUnix(runtime + "/pipewire-0"), node: producerNode, maxFramesPerSecond: 30,
            cursorMetadata: true, logger: Logger(component: "pipewire", threshold: .warning),
            onPicture: { picture in
                pictures.withLock { $0 += 1 }
                staging.put(picture)
            }, onCursor: { pointer in
                pointers.withLock { $0 += 1 }
                staging.putPointer(pointer)
            }, onEnd: { end in ended.withLock { $0 = end } })
        defer { stream.stop() }

        // Pictures with and without a bitmap: wait for ten of them.
        var work: [UInt8] = []
        var taken: (changed: [CaptureRect]?, width: Int, height: Int, receivedMicros: UInt64, pointer: PointerState?)?
        let until = Date().addingTimeInterval(10)
        while Date() < until {
            _ = staging.poll()
            taken = staging.take(into: &work)
            if let t = taken, t.pointer != nil, t.width == 64, pictures.withLock({ $0 }) >= 10 { break }
            usleep(20_000)
        }
        XCTAssertNil(ended.withLock { $0 }, "the stream ended")
        let got = try XCTUnwrap(taken)
        XCTAssertEqual([got.width, got.height], [64, 48])
        let pointer = try XCTUnwrap(got.pointer, "no cursor meta came through PipeWire")
        let (changes, delivered) = (pointers.withLock { $0 }, pictures.withLock { $0 })
        XCTAssertGreaterThanOrEqual(delivered, 10)
        XCTAssertGreaterThanOrEqual(changes, 1)
        XCTAssertLessThan(changes, delivered, "buffers without a bitmap (bitmap_offset 0) keep the shape: no change")
        let bounds = try XCTUnwrap(pointer.bounds)
        XCTAssertEqual([bounds.x, bounds.y, bounds.width, bounds.height], [19, 9, 16, 16], "position (20, 10) − hotspot (1, 1)")
        XCTAssertEqual(pointer.pixels[0], 0xFFFF_0000, "opaque red at the tip")
        XCTAssertEqual(pointer.pixels[1], 0, "transparent right of it")
        XCTAssertEqual(pointer.pixels[15 * 16 + 15], 0xFFFF_0000)

        XCTAssertTrue(work.allSatisfy { $0 == 0x40 }, "the staged picture is the producer's")
        work.withUnsafeMutableBytes { frame in
            pointer.pixels.withUnsafeBufferPointer { cursor in
                CursorOverlay.blend(cursor, width: 16, at: CaptureRect(x: 19, y: 9, width: 16, height: 16), into: frame.baseAddress!,
                                    width: 64, height: 48, stride: 256, showing: CaptureRect(x: 0, y: 0, width: 64, height: 48))
            }
        }
        for y in 0..<48 {
            for x in 0..<64 {
                let (cx, cy) = (x - 19, y - 9)
                let arrow = (0..<16).contains(cx) && (0..<16).contains(cy) && cx <= cy
                let at = y * 256 + x * 4
                XCTAssertEqual(Array(work[at..<(at + 3)]), arrow ? [0, 0, 255] : [0x40, 0x40, 0x40], "pixel \(x),\(y)")
            }
        }
    }

    /// A connection to the PipeWire daemon's socket (what the portal's OpenPipeWireRemote hands out).
    private func connectUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw ConnectError(message: "cannot connect to \(path): errno \(error)")
        }
        return fd
    }

    private struct ConnectError: Error { let message: String }
}
