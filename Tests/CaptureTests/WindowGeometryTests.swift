@testable import Capture
import XCTest

/// `--window`'s words and the letterbox of a resized window, in process.
final class WindowGeometryTests: XCTestCase {
    func testWindowSelectorParsesIdsAndTitles() {
        XCTAssertEqual(WindowSelector(parsing: "0x1a00003"), .id(0x1a00003))
        XCTAssertEqual(WindowSelector(parsing: "0X1A"), .id(0x1a))
        XCTAssertEqual(WindowSelector(parsing: "27262979"), .id(27_262_979))
        XCTAssertEqual(WindowSelector(parsing: "xterm"), .name("xterm"))
        XCTAssertEqual(WindowSelector(parsing: "0xnothex"), .name("0xnothex"))
        XCTAssertEqual(WindowSelector(parsing: "99999999999"), .name("99999999999"), "past 32 bits: a title")
        XCTAssertEqual(WindowSelector.id(0x1a00003).description, "0x1a00003")
        XCTAssertEqual(WindowSelector.name("a b").description, "'a b'")
    }

    /// The picture keeps its aspect and fills the wire size along one side; it grows as well as shrinks.
    func testFitKeepsTheAspectAndFillsOneSide() {
        XCTAssertTrue(WindowCaptureLoop.fit(width: 480, height: 65, into: (240, 130)) == (240, 33))
        XCTAssertTrue(WindowCaptureLoop.fit(width: 120, height: 130, into: (240, 130)) == (120, 130))
        XCTAssertTrue(WindowCaptureLoop.fit(width: 60, height: 40, into: (240, 130)) == (195, 130), "a smaller window is enlarged")
        XCTAssertTrue(WindowCaptureLoop.fit(width: 1, height: 10_000, into: (240, 130)) == (1, 130), "never below one pixel")
        XCTAssertTrue(WindowCaptureLoop.fit(width: 1920, height: 1080, into: (1920, 1080)) == (1920, 1080))
    }
}
