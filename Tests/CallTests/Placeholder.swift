import XCTest

final class CallTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
