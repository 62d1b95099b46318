@testable import Capture
import XCTest

/// A capture loop makes nothing while nobody reads, and a whole picture at once when a reader comes back.
final class ReaderHoldTests: XCTestCase {
    func testHoldThenResumeOnceThenRun() {
        var hold = ReaderHold()
        XCTAssertEqual(hold.turn(readerPresent: true), .run)
        XCTAssertEqual(hold.turn(readerPresent: false), .hold)
        XCTAssertEqual(hold.turn(readerPresent: false), .hold)
        XCTAssertEqual(hold.turn(readerPresent: true), .resume, "the first turn back: a whole picture now")
        XCTAssertEqual(hold.turn(readerPresent: true), .run)
        XCTAssertEqual(ReaderHold.pollMicros, 100_000)
    }
}
