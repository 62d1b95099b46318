import XCTest
final class PlaceholderFrameWireTests: XCTestCase { func testNothing() {} }
