import Foundation
import TestSupport
import XCTest

/// `screencast-dump inspect --json` on every handed case and golden stream, every field compared.
final class InspectTests: XCTestCase {
    private let tool = TestPaths.executable("screencast-dump")

    func testEveryHandedCase() throws {
        for wireCase in try WireCase.load(from: TestPaths.sharedCases) { try check(wireCase, folder: TestPaths.sharedCases) }
    }

    func testEveryGoldenStream() throws {
        for wireCase in try WireCase.load(from: TestPaths.golden) { try check(wireCase, folder: TestPaths.golden) }
    }

    private func check(_ wireCase: WireCase, folder: URL) throws {
        let file = folder.appendingPathComponent(wireCase.name + ".frames").path
        let result = try ProcessRunner.run(tool, ["inspect", "--json", file])
        XCTAssertFalse(result.timedOut, wireCase.name)
        XCTAssertEqual(result.status, wireCase.end == "eof" ? 0 : 1, "\(wireCase.name): exit status; \(result.stderr)")
        let report = try InspectReport(json: result.stdout)
        XCTAssertEqual(report.end, wireCase.end, "\(wireCase.name): end")
        XCTAssertEqual(report.errorKind, wireCase.errorKind, "\(wireCase.name): error kind")
        XCTAssertEqual(report.frames, wireCase.frames, "\(wireCase.name): frames")
        if wireCase.errorKind != nil { XCTAssertFalse(report.errorMessage?.isEmpty ?? true, "\(wireCase.name): error message") }
    }

    func testTableAndSummary() throws {
        let file = TestPaths.golden.appendingPathComponent("agent-extended.frames").path
        let result = try ProcessRunner.run(tool, ["inspect", file])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.contains("4 frames, 0 undecodable"), result.stdout)
        XCTAssertTrue(result.stdout.contains("5033333"), result.stdout)
    }

    func testUsageErrors() throws {
        for arguments in [[], ["inspect"], ["inspect", "a", "b"], ["inspect", "--bogus", "x"], ["frobnicate"],
                          ["replay"], ["replay", "x", "--fps", "0"], ["replay", "x", "--fps", "30", "--as-fast-as-possible"],
                          ["record"], ["extract", "x"], ["replay", "x", "--socket", "relative/path"],
                          ["replay", "x", "--socket", "/" + String(repeating: "a", count: 120)], ["inspect", "--log-level", "loud", "x"]] {
            let result = try ProcessRunner.run(tool, arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            if !arguments.isEmpty {
                XCTAssertTrue(result.stderr.contains("Try 'screencast-dump --help'"), "\(arguments): \(result.stderr)")
            }
        }
        let help = try ProcessRunner.run(tool, ["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("Usage: screencast-dump"))
        let missing = try ProcessRunner.run(tool, ["inspect", "/nonexistent/file.frames"])
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.stderr.contains("/nonexistent/file.frames"), missing.stderr)
    }

    func testExtractWritesEveryBody() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let wireCase = try WireCase.load(name: "not-jpeg-body", from: TestPaths.sharedCases)
        let file = TestPaths.sharedCases.appendingPathComponent("not-jpeg-body.frames").path
        let result = try ProcessRunner.run(tool, ["extract", file, "--out", dir.path("jpegs")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path("jpegs")).sorted()
        XCTAssertEqual(names, ["000000.jpg", "000001.jpg"])
        for (index, expected) in wireCase.frames.enumerated() {
            let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.path("jpegs/\(names[index])"))))
            XCTAssertEqual(body.count, expected.contentLength)
            // The body is the last contentLength bytes of its message.
            let messageEnd = index + 1 < wireCase.frames.count ? wireCase.frames[index + 1].offset : wireCase.bytes.count
            XCTAssertEqual(Array(wireCase.bytes[(messageEnd - body.count)..<messageEnd]), body)
        }
    }
}

/// The parsed `inspect --json` document.
struct InspectReport {
    var frames: [ExpectedFrame]
    var end: String
    var errorKind: String?
    var errorMessage: String?

    init(json: String) throws {
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
        let list = try XCTUnwrap(root["frames"] as? [[String: Any]])
        frames = try list.map { f in
            func int(_ key: String) throws -> Int { try XCTUnwrap(f[key] as? Int, "\(key) in \(f)") }
            if let message = f["decodeError"] { XCTAssertTrue(message is String && !(message as! String).isEmpty) }
            return ExpectedFrame(
                offset: try int("offset"), contentLength: try int("contentLength"),
                bufferWidth: try int("bufferWidth"), bufferHeight: try int("bufferHeight"),
                orientation: try int("orientation"), rotation: try int("rotation"),
                jpegWidth: f["jpegWidth"] as? Int, jpegHeight: f["jpegHeight"] as? Int,
                decodeError: f["decodeError"] != nil,
                timestamp: (f["timestamp"] as? NSNumber)?.uint64Value, sequence: (f["sequence"] as? NSNumber)?.uint64Value,
                format: try XCTUnwrap(f["format"] as? String, "format in \(f)"), colorRange: f["colorRange"] as? String,
                memory: f["memory"] as? [Int])
                .withCapture(f["capture"] as? [String: String] ?? [:])
                .withDamage(f["damage"] as? [[Int]], fault: f["damageFault"] as? String)
        }
        end = try XCTUnwrap(root["end"] as? String)
        XCTAssertTrue(root.keys.contains("error"), "error key present (null or object)")
        let error = root["error"] as? [String: Any]
        errorKind = error?["kind"] as? String
        errorMessage = error?["message"] as? String
    }
}
