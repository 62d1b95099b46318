import Foundation
import Media
import TestSupport
import XCTest

/// aiortc (the repo's venv, `tools/setup`) as a WHEP viewer of a real `screencast-call`, everything in a
/// loopback-only network namespace: ICE (libnice ↔ aioice), DTLS-SRTP, RTP/RTCP for real.
final class AiortcViewerTests: XCTestCase {
    /// A replayed fixture dump (`--source file:`, the static desktop, looping) reaches aiortc, which decodes
    /// it at the dump's size; its last frame, shown as aiortc's VP8 decoder means it (BT.601 limited range),
    /// matches the dump's last picture, shown as a JPEG means it (full range): PSNR ≥ 35 dB in RGB.
    func testReplayedDumpReachesAiortcAndMatchesTheSource() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.AiortcViewerTests/testReplayedDumpReachesAiortcAndMatchesTheSource", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let dump = EndToEnd.fixtures.appendingPathComponent("static-desktop.frames")
        let call = try CallUnderTest(["--source", "file:\(dump.path)"])
        defer { call.stop() }
        let saved = call.folder.path("last.yuv")
        let report = try EndToEnd.runPeer(
            EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--seconds", "5", "--save-last", saved], timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        print("e2e: aiortc static-desktop viewer \(viewer)")
        XCTAssertNil(viewer["error"] as? String)
        XCTAssertEqual(viewer["width"] as? Int, 640)
        XCTAssertEqual(viewer["height"] as? Int, 360)
        XCTAssertGreaterThanOrEqual(viewer["frames"] as? Int ?? 0, 5, "the first frame, refinements, repeats")
        XCTAssertLessThan(viewer["firstFrameMs"] as? Double ?? .infinity, 2000)

        // The dump's last picture, decoded the way the call decodes it.
        let source = try lastJPEGPicture(of: dump)
        let received = try Data(contentsOf: URL(fileURLWithPath: saved))
        let picture = try I420Buffer(width: 640, height: 360, bytes: Array(received), colorSpace: .bt601Limited)
        let value = try rgbPSNR(picture, source)
        print("e2e: RGB PSNR of aiortc's last frame against the dump's last picture: \(String(format: "%.1f", value)) dB")
        XCTAssertGreaterThanOrEqual(value, 35, "RGB PSNR")

        let peers = try call.viewers()
        print("e2e: call viewers \(peers)")
        XCTAssertEqual(peers["created"] as? Int, 1)
    }

    /// The test pattern at 30 fps: aiortc decodes it continuously (no gap over 500 ms), at its size, and the
    /// eight colour bars of its last frame show the pattern's colours (within 4 levels in RGB); the call's /stats saw the peer's
    /// Receiver Reports (RTT) and sent Sender Reports.
    func testTestPatternPlaysContinuouslyWithItsColours() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.AiortcViewerTests/testTestPatternPlaysContinuouslyWithItsColours", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "640x360"])
        defer { call.stop() }
        let saved = call.folder.path("last.yuv")
        let peer = try PythonPeer(EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--seconds", "4", "--save-last", saved])
        Thread.sleep(forTimeInterval: 3)
        let during = try call.viewers()
        let text = try HTTP.request("GET", port: call.port, path: "/stats?format=text").text
        let report = try peer.finish(timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        print("e2e: aiortc test-pattern viewer \(viewer)")
        XCTAssertNil(viewer["error"] as? String)
        XCTAssertEqual(viewer["width"] as? Int, 640)
        XCTAssertEqual(viewer["height"] as? Int, 360)
        XCTAssertGreaterThanOrEqual(viewer["frames"] as? Int ?? 0, 70, "about 30 fps for 4 s")
        XCTAssertLessThan(viewer["maxGapMs"] as? Double ?? .infinity, 500)

        // Each bar's centre as a player shows the VP8 picture (BT.601 limited range to RGB): within 4 levels
        // of the bar's colour.
        let picture = try I420Buffer(width: 640, height: 360, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: saved))), colorSpace: .bt601Limited)
        for (index, point) in barSamplePoints(width: 640, height: 360).enumerated() {
            let shown = ColourChart.bt601RGB(
                y: picture.bytes[picture.yOffset + point.y * picture.yStride + point.x],
                cb: picture.bytes[picture.uOffset + point.y / 2 * picture.uvStride + point.x / 2],
                cr: picture.bytes[picture.vOffset + point.y / 2 * picture.uvStride + point.x / 2], range: .limited)
            let expected = rgb(ofBar: testPatternBars[index])
            let difference = max(abs(Int(shown.r) - expected.r), abs(Int(shown.g) - expected.g), abs(Int(shown.b) - expected.b))
            XCTAssertLessThanOrEqual(difference, 4, "bar \(index): \(shown) vs \(expected)")
        }

        let peers = try XCTUnwrap(during["peers"] as? [[String: Any]])
        print("e2e: call's view of the peer \(peers)")
        let stats = try XCTUnwrap(peers.first)
        XCTAssertEqual(stats["state"] as? String, "connected")
        XCTAssertEqual(stats["lobby"] as? String, "open")
        XCTAssertGreaterThan(stats["framesSent"] as? Int ?? 0, 30)
        XCTAssertGreaterThan(stats["bytesSent"] as? Int ?? 0, 10_000)
        // The viewer's current rate for people: bytes over time, so it agrees with bytesSent and its age.
        let kbps = try XCTUnwrap(stats["kbps"] as? Double, "each viewer's current bitrate")
        let average = Double(stats["bytesSent"] as? Int ?? 0) * 8 / 1000 / max(0.001, stats["ageS"] as? Double ?? 0)
        // (An earlier /stats read starts a window, so the rate is recent, not the life average: within half.)
        XCTAssertEqual(kbps, average, accuracy: max(1, average * 0.5), "the current rate against the life average")
        let id = String((stats["id"] as? String ?? "?").prefix(8))
        let line = text.split(separator: "\n").first { $0.hasPrefix("  viewer \(id) from 127.0.0.1:") }
        XCTAssertNotNil(line, "the text summary names the viewer with its address:\n\(text)")
        XCTAssertTrue(line?.contains(": connected, ") ?? false, "\(line ?? "-")")
        XCTAssertTrue(line?.contains(" kbps") ?? false, "\(line ?? "-")")
        XCTAssertGreaterThanOrEqual(stats["senderReports"] as? Int ?? 0, 1)
        XCTAssertGreaterThanOrEqual(stats["receiverReports"] as? Int ?? 0, 1)
        XCTAssertNotNil(stats["rttMs"] as? Double, "RTT from a Receiver Report answering our SR")
    }

    /// The last JPEG picture of a `.frames` dump, as I420.
    private func lastJPEGPicture(of dump: URL) throws -> I420Buffer {
        let bytes = [UInt8](try Data(contentsOf: dump))
        // Frames are `headers\r\n\r\n` + Content-Length bytes of JPEG; the last JPEG starts at the last SOI
        // that follows a blank line.
        var start: Int?
        var index = 0
        while index + 5 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10,
               bytes[index + 4] == 0xFF, bytes[index + 5] == 0xD8
            {
                start = index + 4
            }
            index += 1
        }
        let jpeg = Array(bytes[try XCTUnwrap(start)...])
        return try JPEGDecoder().decodeI420(jpeg)
    }
}
