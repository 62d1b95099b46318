import Foundation
import TestSupport
import XCTest

/// A socket path whose folder cannot be made (the call makes only the socket's own folder): the call names the
/// missing folder, once, and exits 64 (the command line must change) before anything starts.
final class SocketFolderTests: CallTestCase {
    func testAMissingGrandparentIsNamedAndNothingIsCreated() throws {
        let top = folder.path("a")
        let path = top + "/b/c/x.sock"
        let result = try ProcessRunner.run(TestPaths.executable("screencast-call"), ["--socket", path, "--http", "off"], timeout: 15)
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("screencast-call: --socket: cannot create the socket folder '\(top)/b/c': '\(top)' does not exist"), result.stderr)
        XCTAssertEqual(result.stderr.components(separatedBy: "does not exist").count, 2, "said once:\n\(result.stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: top), "no folder chain is created")
    }
}
