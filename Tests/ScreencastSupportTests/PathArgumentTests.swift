import Foundation
import Glibc
import ScreencastSupport
import XCTest

/// The checks of files named on a command line, against the real file system (a folder of the test's own).
final class PathArgumentTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("path-argument-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
    }

    override func tearDownWithError() throws {
        chmod(folder, 0o755)
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return (error as? UsageError)?.reason ?? "\(error)"
        }
    }

    func testAReadableFilePassesAndWhatIsNotIsNamed() {
        XCTAssertNil(reason { try PathArgument.readableFile(folder + "/file", option: "--in") })
        XCTAssertEqual(reason { try PathArgument.readableFile(folder + "/none", option: "--in") },
                       "--in: '\(folder)/none': No such file or directory")
        XCTAssertEqual(reason { try PathArgument.readableFile(folder, option: "--in") }, "--in: '\(folder)' is a folder, not a file")
    }

    func testAnUnreadableFileIsNamedUnlessRootReadsAnyway() throws {
        chmod(folder + "/file", 0)
        let message = reason { try PathArgument.readableFile(folder + "/file", option: "--in") }
        if geteuid() == 0 {
            XCTAssertNil(message, "root reads a file of mode 000")
        } else {
            XCTAssertEqual(message, "--in: '\(folder)/file' cannot be read: Permission denied")
        }
    }

    func testAWritableFileNeedsAnExistingWritableFolderAndIsNotAFolder() {
        XCTAssertNil(reason { try PathArgument.writableFile(folder + "/new.ivf", option: "--record") })
        XCTAssertNil(reason { try PathArgument.writableFile(folder + "/file", option: "--record") }, "an existing file is replaced")
        XCTAssertNil(reason { try PathArgument.writableFile("/dev/null", option: "--record") }, "a writable device")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/new.ivf"), "nothing is created")
        XCTAssertEqual(reason { try PathArgument.writableFile(folder + "/no/x.ivf", option: "--record") },
                       "--record: folder '\(folder)/no' does not exist (for '\(folder)/no/x.ivf')")
        XCTAssertEqual(reason { try PathArgument.writableFile(folder + "/file/x.ivf", option: "--record") },
                       "--record: '\(folder)/file' is not a folder (for '\(folder)/file/x.ivf')")
        XCTAssertEqual(reason { try PathArgument.writableFile(folder, option: "--record") }, "--record: '\(folder)' is a folder")
    }

    func testTheFolderOfAPath() {
        XCTAssertEqual(PathArgument.folder(of: "/x"), "/")
        XCTAssertEqual(PathArgument.folder(of: "x"), ".")
        XCTAssertEqual(PathArgument.folder(of: "a/b/c"), "a/b")
        XCTAssertEqual(PathArgument.folder(of: "/a/b/"), "/a/b")
    }
}
