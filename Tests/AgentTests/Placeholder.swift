import XCTest

final class AgentTestsPlaceholder: XCTestCase {
    func testModuleBuilds() {}
}
