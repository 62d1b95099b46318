import Foundation
import Media
import TestSupport
import XCTest

/// A file that is not a frame dump (the call's IVF recording, a screenshot, a capture) is named for what it
/// is, by every command that reads dumps, instead of a wire error about its first byte.
final class ForeignFileTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws { folder = try TemporaryDirectory(prefix: "foreign") }
    override func tearDown() { folder?.remove() }

    /// Real files where a library makes them (IVF header from Media, a JPEG from libturbojpeg); the others
    /// carry their format's signature and a first chunk header, as the formats define them.
    private func samples() throws -> [(name: String, bytes: [UInt8], kind: String)] {
        var ivf: [UInt8] = []
        IVFFileHeader(width: 320, height: 240).append(to: &ivf)
        let jpeg = try JPEGEncoder().encode(I420Buffer(width: 16, height: 16, colorSpace: .bt601Full), quality: 80)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        let webm: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0xF7, 0x81, 0x01]
        let mp4: [UInt8] = [0, 0, 0, 0x20] + Array("ftypisom".utf8) + [0, 0, 2, 0]
        return [("call.ivf", ivf, "IVF"), ("shot.jpg", Array(jpeg), "a JPEG image"), ("shot.png", png, "a PNG image"),
                ("call.webm", webm, "WebM/Matroska"), ("call.mp4", mp4, "MP4/QuickTime")]
    }

    func testInspectReplayAndExtractNameTheFileKind() throws {
        for sample in try samples() {
            let path = folder.path(sample.name)
            try Data(sample.bytes).write(to: URL(fileURLWithPath: path))
            for command in [["inspect", path], ["inspect", "--json", path], ["extract", path, "--out", folder.path("out-\(sample.name)")]] {
                let result = try ProcessRunner.run(tool, command, timeout: 20)
                XCTAssertEqual(result.status, 1, "\(command): \(result.stderr)")
                XCTAssertEqual(result.stdout, "", "\(command): nothing printed before the error")
                XCTAssertEqual(result.stderr, "screencast-dump: \(path): not a frame dump (this looks like \(sample.kind))\n", "\(command)")
            }
        }
    }

    func testADumpCutMidStreamIsStillRead() throws {
        // Only a positive match is refused: a dump that starts mid-frame is the decoder's to resynchronise.
        let result = try ProcessRunner.run(tool, ["inspect", "--json", DumpFixtures.handed("midstream-start")], timeout: 20)
        XCTAssertFalse(result.stderr.contains("not a frame dump"), result.stderr)
        XCTAssertFalse(result.stdout.isEmpty)
    }
}
