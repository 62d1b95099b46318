import Glibc
import ScreencastSupport
import XCTest

/// The call raises its descriptor limit to the hard one (ICE-TCP connections, viewers and HTTP each hold one).
final class OpenFileLimitTests: XCTestCase {
    func testTheSoftLimitGoesUpToTheHardOne() {
        var limit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        let saved = limit
        defer { var restore = saved; _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restore) }
        limit.rlim_cur = min(256, limit.rlim_max)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        let raised = OpenFileLimit.raiseToHard()
        XCTAssertEqual(raised?.before, UInt64(min(256, saved.rlim_max)))
        XCTAssertEqual(raised?.after, UInt64(saved.rlim_max))
        XCTAssertEqual(OpenFileLimit.current, UInt64(saved.rlim_max))
    }
}
