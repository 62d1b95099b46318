import DataChannel
import SDP
import XCTest

/// The limit the answer advertises (`a=max-message-size`, SDP) is the one the data channels enforce.
final class DataChannelLimitTests: XCTestCase {
    func testAdvertisedMaxMessageSizeIsEnforcedOne() {
        XCTAssertEqual(DataChannelAnswer.maxMessageSize, DataChannelSession.maxMessageSize)
        XCTAssertEqual(DataChannelAnswer.sctpPort, SCTPAssociation.port)
    }
}
