import XCTest
final class PlaceholderDumpToolTests: XCTestCase { func testNothing() {} }
