import XCTest
final class PlaceholderMediaTests: XCTestCase { func testNothing() {} }
