import XCTest
final class PlaceholderFrameSocketTests: XCTestCase { func testNothing() {} }
