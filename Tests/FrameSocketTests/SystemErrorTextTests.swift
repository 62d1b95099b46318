import FrameSocket
import Glibc
import ScreencastSupport
import XCTest

/// `SystemErrorText.of`: the one place a system call's errno becomes text (socket, dump, call and agent errors).
final class SystemErrorTextTests: XCTestCase {
    func testCodesAndTheCurrentErrno() {
        XCTAssertEqual(SystemErrorText.of(ENOENT), "No such file or directory")
        XCTAssertEqual(SystemErrorText.of(EACCES), "Permission denied")
        XCTAssertTrue(SystemErrorText.of(123_456).hasPrefix("Unknown error"), SystemErrorText.of(123_456))
        XCTAssertEqual(open("/nonexistent/screencast", O_RDONLY), -1)
        XCTAssertEqual(SystemErrorText.of(), "No such file or directory", "the default is errno at the call")
    }

    func testSocketErrorsCarryTheText() {
        let error = FrameSocketError.systemCall(name: "connect", errno: ECONNREFUSED, path: "/run/x.sock")
        XCTAssertEqual(error.description, "connect '/run/x.sock' failed: Connection refused (errno 111)")
    }
}
