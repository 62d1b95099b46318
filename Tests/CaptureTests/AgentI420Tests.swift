import Capture
import Foundation
import FrameWire
import Media
import TestSupport
import XCTest
import XTestSupport

/// `screencast-agent --format i420` under a real X server: raw limited-range I420 frames (said so on the
/// wire) that show the screen, closer to it than the JPEG frames of the same screen.
final class AgentI420Tests: XServerTestCase {
    let agent = TestPaths.executable("screencast-agent")
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = try TemporaryDirectory(prefix: "sc-i420")
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    private func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(agent, ["--display", server.display, "--cursor", "off"] + arguments, timeout: 20)
    }

    /// The body as BGRX, shown in the range its header says (libyuv `I420ToARGB` for limited range).
    private func bgrx(_ frame: Frame) throws -> BGRXImage {
        let (width, height) = (frame.header.bufferWidth, frame.header.bufferHeight)
        let range: YCbCrRange = frame.header.bodyColorRange == .limited ? .limited : .full
        let picture = try I420Buffer(width: width, height: height, bytes: frame.body, colorSpace: YCbCrColorSpace(range: range))
        var image = BGRXImage()
        try BGRXToYUV.convertToBGRX(picture, into: &image)
        return image
    }

    func testI420FramesShowTheScreenBetterThanJPEG() throws {
        let pattern = TestImages.pattern(width: 320, height: 240)
        client.setRootBackground(pattern)
        let rawDump = folder.path("raw.frames")
        let result = try run(["--output", rawDump, "--frames", "3", "--keepalive", "0.1", "--format", "i420"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let (frames, end) = try DumpReader.frames(rawDump)
        XCTAssertEqual(end, .eof)
        XCTAssertEqual(frames.count, 3)
        XCTAssertEqual(frames.map(\.header.format), [.i420, .i420, .i420])
        XCTAssertEqual(frames.map(\.header.colorRange), [.limited, .limited, .limited], "Buffer-Color-Range: limited")
        XCTAssertEqual(frames.map(\.header.contentLength), [115_200, 115_200, 115_200], "320·240·1.5 bytes")
        XCTAssertEqual(frames.map(\.header.sequence), [0, 1, 2])
        XCTAssertEqual(frames.map(\.header.damage), [[DamageRect.whole(width: 320, height: 240)], [], []],
                       "Buffer-Damage: the whole buffer first, none on the keepalives")
        XCTAssertEqual(frames[1].body, frames[0].body, "a keepalive repeats the picture (no paint-over for raw)")
        let rawDB = TestImages.psnr(try bgrx(frames[0]), pattern)

        let jpegDump = folder.path("jpeg.frames")
        XCTAssertEqual(try run(["--output", jpegDump, "--frames", "1", "--quality", "90"]).status, 0)
        let jpegFrame = try XCTUnwrap(try DumpReader.frames(jpegDump).frames.first)
        XCTAssertEqual(jpegFrame.header.format, .jpeg)
        XCTAssertEqual(jpegFrame.header.damage, [DamageRect.whole(width: 320, height: 240)], "Buffer-Damage on the JPEG wire too")
        let jpegDB = TestImages.psnr(try TestImages.decode(jpegFrame.body), pattern)
        print("agent PSNR vs the screen: i420 \(rawDB) dB, jpeg q90 \(jpegDB) dB")
        XCTAssertGreaterThanOrEqual(rawDB, 35)
        XCTAssertGreaterThan(rawDB, jpegDB, "raw I420 is nearer the screen than JPEG q90")

        // The dump tool shows the format, and extract writes the raw planes as .yuv.
        let dump = TestPaths.executable("screencast-dump")
        let inspect = try ProcessRunner.run(dump, ["inspect", rawDump])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertTrue(inspect.stdout.contains("I420"), inspect.stdout)
        let json = try ProcessRunner.run(dump, ["inspect", "--json", rawDump])
        XCTAssertTrue(json.stdout.contains("\"format\":\"I420\""), json.stdout)
        let extract = try ProcessRunner.run(dump, ["extract", rawDump, "--out", folder.path("bodies")])
        XCTAssertEqual(extract.status, 0, extract.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path("bodies")).sorted()
        XCTAssertEqual(names, ["000000.yuv", "000001.yuv", "000002.yuv"])
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.path("bodies/000000.yuv")))), frames[0].body)
    }

    /// An odd-sized region, scaled: the I420 planes take (W+1)/2 × (H+1)/2 chroma and still show the screen.
    func testOddSizedScaledRegion() throws {
        let pattern = TestImages.pattern(width: 320, height: 240)
        client.setRootBackground(pattern)
        let dumpPath = folder.path("odd.frames")
        let result = try run(["--output", dumpPath, "--frames", "1", "--format", "i420", "--region", "10,20,101,77"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let frame = try XCTUnwrap(try DumpReader.frames(dumpPath).frames.first)
        XCTAssertEqual([frame.header.bufferWidth, frame.header.bufferHeight], [101, 77])
        XCTAssertEqual(frame.body.count, 101 * 77 + 2 * 51 * 39)
        let region = CaptureRect(x: 10, y: 20, width: 101, height: 77)
        XCTAssertGreaterThanOrEqual(TestImages.psnr(try bgrx(frame), TestImages.crop(pattern, region)), 35)

        let scaledPath = folder.path("scaled.frames")
        XCTAssertEqual(try run(["--output", scaledPath, "--frames", "1", "--format", "i420", "--scale", "0.5"]).status, 0)
        let scaled = try XCTUnwrap(try DumpReader.frames(scaledPath).frames.first)
        XCTAssertEqual([scaled.header.bufferWidth, scaled.header.bufferHeight], [160, 120])
        XCTAssertEqual(scaled.body.count, 160 * 120 * 3 / 2)
    }
}
