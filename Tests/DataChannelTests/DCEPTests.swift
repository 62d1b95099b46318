import DataChannel
import XCTest

/// DCEP messages (RFC 8832 §5) byte for byte, and the channel rules of ``DataChannelEstablishment`` driven
/// event by event (no SCTP).
final class DCEPTests: XCTestCase {
    /// DATA_CHANNEL_OPEN as Chromium sends `createDataChannel("chat")`: reliable, ordered, priority 256, label
    /// "chat", no protocol (bytes from RFC 8832 §5.1's layout).
    let chromiumOpen: [UInt8] = [0x03, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0x00, 0x04, 0x00, 0x00] + Array("chat".utf8)

    func parse(_ bytes: [UInt8]) throws -> DCEPMessage {
        try bytes.withUnsafeBytes { raw in try DCEPMessage(parsing: raw) }
    }

    func testOpenAndAckRoundTrip() throws {
        let open = try parse(chromiumOpen)
        XCTAssertEqual(open, .open(label: "chat", protocol: "", reliability: .init(), priority: 256))
        XCTAssertEqual(open.bytes, chromiumOpen)
        XCTAssertEqual(try parse([0x02]), .ack)
        let partial = DCEPMessage.open(label: "ünï", protocol: "p", reliability: .init(ordered: false, limit: .maxRetransmits(3)), priority: 512)
        XCTAssertEqual(partial.bytes[1], 0x81)
        XCTAssertEqual(Array(partial.bytes[4..<8]), [0, 0, 0, 3])
        XCTAssertEqual(try parse(partial.bytes), partial)
        let timed = DCEPMessage.open(label: "", protocol: "", reliability: .init(limit: .lifetimeMillis(70_000)), priority: 0)
        XCTAssertEqual(try parse(timed.bytes), timed)
    }

    func testMalformedMessagesAreTypedErrors() {
        func error(_ bytes: [UInt8]) -> DataChannelError? {
            do { _ = try parse(bytes); return nil } catch { return error as? DataChannelError }
        }
        XCTAssertEqual(error([]), .malformedDCEP("empty message"))
        XCTAssertEqual(error([0x02, 0x00]), .malformedDCEP("DATA_CHANNEL_ACK of 2 bytes (1)"))
        XCTAssertEqual(error([0x07]), .unknownDCEPType(7))
        XCTAssertEqual(error(Array(chromiumOpen.prefix(11))), .malformedDCEP("DATA_CHANNEL_OPEN of 11 bytes (at least 12)"))
        XCTAssertNotNil(error(Array(chromiumOpen.dropLast())))  // label length past the end
        XCTAssertNotNil(error(chromiumOpen + [0x41]))  // trailing byte
        var badType = chromiumOpen
        badType[1] = 0x03
        XCTAssertEqual(error(badType), .malformedDCEP("unknown channel type 0x3"))
        var badUTF8 = chromiumOpen
        badUTF8[12] = 0xff
        XCTAssertEqual(error(badUTF8), .malformedDCEP("label or protocol is not UTF-8"))
        let long = [0x03, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0x04, 0x01, 0x00, 0x00] + [UInt8](repeating: 0x61, count: 1025)
        XCTAssertEqual(error(long), .malformedDCEP("label of 1025 or protocol of 0 bytes (at most \(DCEPMessage.maxLabelBytes))"))
    }

    func machine() -> DataChannelEstablishment {
        DataChannelEstablishment(parity: .odd, maxMessageSize: 100, remoteMaxMessageSize: 50, streamCount: 1024)
    }

    func receive(_ m: inout DataChannelEstablishment, _ stream: UInt16, _ ppid: UInt32, _ bytes: [UInt8]) -> [DataChannelEstablishment.Action] {
        bytes.withUnsafeBytes { m.received(streamID: stream, ppid: ppid, payload: $0) }
    }

    func testPeerOpensThenMessagesBothWaysThenCloses() throws {
        var m = machine()
        let actions = receive(&m, 0, 50, chromiumOpen)
        let channel = DataChannelEstablishment.Channel(streamID: 0, label: "chat", protocol: "", reliability: .init(), openedByPeer: true)
        XCTAssertEqual(actions, [.send(streamID: 0, ppid: .dcep, bytes: [0x02], reliability: .init()), .opened(channel)])
        XCTAssertEqual(receive(&m, 0, 51, Array("héllo".utf8)), [.message(streamID: 0, .string("héllo"))])
        XCTAssertEqual(receive(&m, 0, 53, [0, 1, 2]), [.message(streamID: 0, .binary([0, 1, 2]))])
        XCTAssertEqual(receive(&m, 0, 56, [0]), [.message(streamID: 0, .string(""))])
        XCTAssertEqual(receive(&m, 0, 57, [0]), [.message(streamID: 0, .binary([]))])
        XCTAssertEqual(try m.send(.string("hi"), on: 0), .send(streamID: 0, ppid: .string, bytes: [0x68, 0x69], reliability: .init()))
        XCTAssertEqual(try m.send(.binary([]), on: 0), .send(streamID: 0, ppid: .binaryEmpty, bytes: [0], reliability: .init()))
        XCTAssertThrowsError(try m.send(.binary([UInt8](repeating: 0, count: 51)), on: 0)) {
            XCTAssertEqual($0 as? DataChannelError, .messageTooLarge(size: 51, limit: 50))
        }
        XCTAssertEqual(m.peerResetStream(0), [.resetStream(0), .closed(streamID: 0, reason: "closed by the peer")])
        XCTAssertTrue(m.openChannels.isEmpty)
        XCTAssertThrowsError(try m.send(.string("late"), on: 0))
    }

    func testBadInputClosesOnlyThatChannel() {
        var m = machine()
        _ = receive(&m, 0, 50, chromiumOpen)
        _ = receive(&m, 2, 50, chromiumOpen)
        _ = receive(&m, 4, 50, chromiumOpen)
        _ = receive(&m, 6, 50, chromiumOpen)
        _ = receive(&m, 8, 50, chromiumOpen)
        XCTAssertEqual(receive(&m, 0, 51, [0xc3, 0x28]), [.resetStream(0), .closed(streamID: 0, reason: "string message is not UTF-8")])
        XCTAssertEqual(receive(&m, 2, 53, [UInt8](repeating: 1, count: 101)),
                       [.resetStream(2), .closed(streamID: 2, reason: "message of 101 bytes exceeds the limit of 100 bytes")])
        XCTAssertEqual(receive(&m, 4, 54, [1]), [.resetStream(4), .closed(streamID: 4, reason: "unsupported payload protocol identifier 54")])
        XCTAssertEqual(receive(&m, 6, 50, [0x09]), [.resetStream(6), .closed(streamID: 6, reason: "unknown DCEP message type 0x9")])
        XCTAssertEqual(m.openChannels.map(\.streamID), [8])
        XCTAssertEqual(receive(&m, 8, 53, [7]), [.message(streamID: 8, .binary([7]))])
        // The rest of a closing channel is dropped quietly; its peer's reset completes the close.
        XCTAssertEqual(receive(&m, 0, 51, Array("x".utf8)), [])
        XCTAssertEqual(m.peerResetStream(0), [])
        XCTAssertEqual(m.messageTooLarge(streamID: 8, size: 1000),
                       [.resetStream(8), .closed(streamID: 8, reason: "message of 1000 bytes exceeds the limit of 100 bytes")])
    }

    func testStreamsWithoutChannelAndWrongParityAreRefused() {
        var m = machine()
        XCTAssertEqual(receive(&m, 10, 51, Array("x".utf8)),
                       [.resetStream(10), .refused(streamID: 10, reason: "data on stream 10, which has no channel")])
        XCTAssertEqual(receive(&m, 1, 50, chromiumOpen),
                       [.resetStream(1), .refused(streamID: 1, reason: "DATA_CHANNEL_OPEN on stream 1, not of the peer's parity (RFC 8832 §6)")])
        XCTAssertEqual(receive(&m, 2000, 50, chromiumOpen).first, .resetStream(2000))
        XCTAssertTrue(m.openChannels.isEmpty)
    }

    func testChannelLimit() throws {
        var m = machine()
        for index in 0..<DataChannelEstablishment.maxChannels {
            XCTAssertEqual(receive(&m, UInt16(index * 2), 50, chromiumOpen).count, 2)
        }
        let over = UInt16(DataChannelEstablishment.maxChannels * 2)
        XCTAssertEqual(receive(&m, over, 50, chromiumOpen),
                       [.resetStream(over), .refused(streamID: over, reason: "no data channel left (limit \(DataChannelEstablishment.maxChannels))")])
        XCTAssertThrowsError(try m.open(label: "mine"))
    }

    func testWeOpenOnOurParity() throws {
        var m = machine()
        let actions = try m.open(label: "cursor", protocol: "screencast-cursor")
        guard case .send(1, .dcep, let bytes, _) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(try parse(bytes), .open(label: "cursor", protocol: "screencast-cursor", reliability: .init(), priority: 256))
        XCTAssertEqual(try m.open(label: "b").count, 2)
        XCTAssertEqual(m.openChannels.map(\.streamID), [1, 3])
        XCTAssertEqual(receive(&m, 1, 50, [0x02]), [])  // the ACK
        XCTAssertEqual(m.close(1, reason: "done"), [.resetStream(1), .closed(streamID: 1, reason: "done")])
    }
}

/// The association's own limit is checked, not trapped on.
final class SCTPAssociationLimitTests: XCTestCase {
    func testMaxMessageSizeRange() throws {
        XCTAssertThrowsError(try SCTPAssociation(maxMessageSize: 0, wake: {}))
        XCTAssertThrowsError(try SCTPAssociation(maxMessageSize: SCTPAssociation.maxMessageSizeLimit + 1, wake: {}))
        let association = try SCTPAssociation(maxMessageSize: SCTPAssociation.maxMessageSizeLimit, wake: {})
        XCTAssertFalse(association.isUp)
        XCTAssertThrowsError(try [UInt8]([1]).withUnsafeBytes { try association.send(streamID: 0, ppid: 51, bytes: $0, reliability: .init()) }) {
            XCTAssertEqual($0 as? DataChannelError, .notConnected)
        }
    }
}
