import XCTest

final class VideoSourceTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
