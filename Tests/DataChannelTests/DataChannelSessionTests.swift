import DataChannel
import Foundation
import Synchronization
import XCTest

/// Wake-ups from usrsctp's thread, counted (the owner's queue would poll on each).
final class WakeFlag: Sendable {
    let raised = Atomic<Int>(0)
    func raise() { raised.add(1, ordering: .relaxed) }
    func take() -> Bool { raised.exchange(0, ordering: .relaxed) > 0 }
}

/// Two ``DataChannelSession``s (usrsctp each, one process) joined by an in-memory link that moves SCTP
/// packets as DTLS would: the association comes up, channels open by DCEP, messages of every kind go both
/// ways (one of the largest size), and bad input closes one channel while the association and the other
/// channels go on.
final class DataChannelSessionTests: XCTestCase {
    /// Both ends and the packets between them; `pump` runs until `done` or the deadline.
    final class Link {
        let client: DataChannelSession
        let server: DataChannelSession
        var clientEvents: [DataChannelSession.Event] = []
        var serverEvents: [DataChannelSession.Event] = []
        var packetsMoved = 0

        /// Poll an end only when it was woken or after it received (as the peer connection does).
        var wakeOnly = false
        let clientWake: WakeFlag, serverWake: WakeFlag

        convenience init() throws {
            let clientWake = WakeFlag(), serverWake = WakeFlag()
            try self.init(
                client: DataChannelSession(parity: .even, remoteMaxMessageSize: DataChannelSession.maxMessageSize, wake: { clientWake.raise() }),
                server: DataChannelSession(parity: .odd, remoteMaxMessageSize: DataChannelSession.maxMessageSize, wake: { serverWake.raise() }),
                clientWake: clientWake, serverWake: serverWake)
        }

        init(client: DataChannelSession, server: DataChannelSession, clientWake: WakeFlag, serverWake: WakeFlag) {
            self.client = client
            self.server = server
            self.clientWake = clientWake
            self.serverWake = serverWake
        }

        /// Moves packets and polls both ends (usrsctp's timer thread sends delayed SACKs and
        /// retransmissions between our calls) until `done` holds; fails after `seconds`.
        func pump(seconds: Double = 5, until done: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if !wakeOnly || clientWake.take() { clientEvents += client.poll() }
                if !wakeOnly || serverWake.take() { serverEvents += server.poll() }
                let fromClient = client.takePackets(), fromServer = server.takePackets()
                for packet in fromClient { serverEvents += packet.withUnsafeBytes { server.receive($0) } }
                for packet in fromServer { clientEvents += packet.withUnsafeBytes { client.receive($0) } }
                packetsMoved += fromClient.count + fromServer.count
                if done() { return true }
                if fromClient.isEmpty, fromServer.isEmpty { usleep(1000) }
            }
            return false
        }

        func messages(_ events: [DataChannelSession.Event]) -> [DataChannelEstablishment.Message] {
            events.compactMap { if case .message(_, let message) = $0 { message } else { nil } }
        }
    }

    func connectedLink() throws -> Link {
        let link = try Link()
        try link.client.start()
        try link.server.start()
        XCTAssertTrue(link.pump { link.clientEvents.contains(.up) && link.serverEvents.contains(.up) }, "association up")
        return link
    }

    func testChannelOpensAndMessagesGoBothWays() throws {
        let link = try connectedLink()
        let opened = try link.client.open(label: "chat", protocol: "p")
        XCTAssertEqual(opened.count, 1)
        XCTAssertTrue(link.pump { link.serverEvents.contains { if case .opened = $0 { true } else { false } } }, "\(link.serverEvents) \(link.clientEvents) moved \(link.packetsMoved)")
        XCTAssertEqual(link.server.openChannels.map(\.label), ["chat"])
        XCTAssertEqual(link.server.openChannels.map(\.streamID), [0])

        let big = (0..<DataChannelSession.maxMessageSize).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let sent: [DataChannelEstablishment.Message] = [.string("héllo"), .binary([1, 2, 3]), .string(""), .binary([]), .binary(big)]
        for message in sent { try link.client.send(message, on: 0) }
        XCTAssertTrue(link.pump { link.messages(link.serverEvents).count == sent.count })
        XCTAssertEqual(link.messages(link.serverEvents), sent)
        for message in sent.reversed() { try link.server.send(message, on: 0) }
        XCTAssertTrue(link.pump { link.messages(link.clientEvents).count == sent.count })
        XCTAssertEqual(link.messages(link.clientEvents), sent.reversed())
        XCTAssertEqual(link.server.statistics.messagesIn, 5)
        XCTAssertEqual(link.server.statistics.messagesOut, 5)
        XCTAssertEqual(link.server.statistics.bytesIn, 3 + 6 + big.count)
        XCTAssertEqual(link.server.statistics.channelsOpen, 1)
        // Over the peer's limit: refused here, nothing sent.
        XCTAssertThrowsError(try link.client.send(.binary(big + [0]), on: 0)) {
            XCTAssertEqual($0 as? DataChannelError, .messageTooLarge(size: big.count + 1, limit: DataChannelSession.maxMessageSize))
        }

        // The client closes: the server hears the reset and closes too.
        XCTAssertEqual(link.client.close(0, reason: "bye"), [.closed(streamID: 0, reason: "bye")])
        XCTAssertTrue(link.pump { link.serverEvents.contains(.closed(streamID: 0, reason: "closed by the peer")) })
        XCTAssertEqual(link.server.statistics.channelsOpen, 0)
    }

    /// Only the wake-ups from usrsctp's timer thread (delayed SACKs, retransmissions) drive the ends between
    /// packets, as on a peer connection's queue: a 256 KiB message each way still arrives.
    func testWakeUpsAloneCarryLargeMessages() throws {
        let link = try connectedLink()
        link.wakeOnly = true
        _ = try link.client.open(label: "w")
        let big = [UInt8](repeating: 0x5a, count: DataChannelSession.maxMessageSize)
        try link.client.send(.binary(big), on: 0)
        XCTAssertTrue(link.pump { link.messages(link.serverEvents) == [.binary(big)] }, "\(link.serverEvents.count) events")
        try link.server.send(.binary(big), on: 0)
        XCTAssertTrue(link.pump { link.messages(link.clientEvents) == [.binary(big)] }, "\(link.clientEvents.count) events")
    }

    func testEchoChannel() throws {
        let link = try connectedLink()
        _ = try link.client.open(label: "echo", protocol: DataChannelSession.echoProtocol)
        try link.client.send(.string("ping 1"), on: 0)
        try link.client.send(.binary([9, 8]), on: 0)
        XCTAssertTrue(link.pump { link.messages(link.clientEvents).count == 2 })
        XCTAssertEqual(link.messages(link.clientEvents), [.string("ping 1"), .binary([9, 8])])
    }

    /// A message over our limit (sent by a peer that ignores our `a=max-message-size`) closes that channel
    /// with the reason; a second channel and the association go on.
    func testOversizedMessageClosesOnlyItsChannel() throws {
        // The client believes the server takes 1 MiB.
        let reckless = try DataChannelSession(parity: .even, remoteMaxMessageSize: 1 << 20, wake: {})
        let pair = try LinkOf(client: reckless)
        _ = try pair.link.client.open(label: "a")
        _ = try pair.link.client.open(label: "b")
        XCTAssertTrue(pair.link.pump { pair.link.server.openChannels.count == 2 })
        try pair.link.client.send(.binary([UInt8](repeating: 5, count: DataChannelSession.maxMessageSize + 1000)), on: 0)
        try pair.link.client.send(.string("still here"), on: 2)
        let reason = "message of \(DataChannelSession.maxMessageSize + 1000) bytes exceeds the limit of \(DataChannelSession.maxMessageSize) bytes"
        XCTAssertTrue(pair.link.pump {
            pair.link.serverEvents.contains(.closed(streamID: 0, reason: reason))
                && pair.link.messages(pair.link.serverEvents) == [.string("still here")]
        }, "\(pair.link.serverEvents)")
        XCTAssertTrue(pair.link.pump { pair.link.clientEvents.contains(.closed(streamID: 0, reason: "closed by the peer")) })
        XCTAssertEqual(pair.link.server.openChannels.map(\.label), ["b"])
        try pair.link.server.send(.string("after"), on: 2)
        XCTAssertTrue(pair.link.pump { pair.link.messages(pair.link.clientEvents) == [.string("after")] })
    }

    /// A link whose client is given (to send what the server refuses).
    struct LinkOf {
        let link: Link
        init(client: DataChannelSession) throws {
            link = try Link(client: client)
            try link.client.start()
            try link.server.start()
            guard link.pump(until: { link.clientEvents.contains(.up) && link.serverEvents.contains(.up) }) else {
                throw DataChannelError.notConnected
            }
        }
    }

    /// Garbage and truncated SCTP packets are dropped by usrsctp; the association goes on.
    func testGarbagePacketsAreIgnored() throws {
        let link = try connectedLink()
        var random = SystemRandomNumberGenerator()
        for length in [0, 1, 11, 12, 13, 100, 1200] {
            let junk = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            XCTAssertEqual(junk.withUnsafeBytes { link.server.receive($0) }, [])
        }
        _ = try link.client.open(label: "x")
        try link.client.send(.string("ok"), on: 0)
        XCTAssertTrue(link.pump { link.messages(link.serverEvents) == [.string("ok")] })
    }
}

extension DataChannelSessionTests.Link {
    convenience init(client: DataChannelSession) throws {
        let serverWake = WakeFlag()
        try self.init(
            client: client,
            server: DataChannelSession(parity: .odd, remoteMaxMessageSize: DataChannelSession.maxMessageSize, wake: { serverWake.raise() }),
            clientWake: WakeFlag(), serverWake: serverWake)
    }
}
