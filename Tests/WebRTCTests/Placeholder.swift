import XCTest

final class WebRTCTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
