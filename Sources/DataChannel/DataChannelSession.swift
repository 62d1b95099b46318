/// One peer's data channels (RFC 8831): an ``SCTPAssociation`` carried by the owner's DTLS (RFC 8261) and
/// the channels on it (``DataChannelEstablishment``). SCTP packets in and out are the owner's to move; what
/// happened comes back as ``Event``s.
///
/// ```
///   DTLS application data ─▶ receive(packet) ─┐                      ┌─▶ takePackets() ─▶ DTLS records
///   wake-up (usrsctp's thread) ─▶ poll() ─────┼─▶ association ─▶ DCEP ┤
///   send(message, on:) / close(channel) ──────┘                      └─▶ [Event]: up, opened, message, closed
/// ```
///
/// Channels whose sub-protocol is ``echoProtocol`` send every message back as it came (strings as
/// strings, bytes as bytes): a viewer measures the channel's round trip with it, and tests prove both
/// directions with it.
///
/// Not thread-safe: one owner (the peer connection's queue) calls it; `wake` (given to ``init(parity:remoteMaxMessageSize:wake:)``)
/// comes on usrsctp's thread and should only schedule ``poll()`` on the owner.
public final class DataChannelSession {
    /// What happened, for the owner (logs, `/stats`, the features on the channels).
    public enum Event: Sendable, Equatable {
        /// The association is up.
        case up
        /// The association ended; every channel with it.
        case lost(String)
        case opened(DataChannelEstablishment.Channel)
        case message(streamID: UInt16, DataChannelEstablishment.Message)
        case closed(streamID: UInt16, reason: String)
        /// A stream with no channel was reset (an OPEN refused, data without a channel).
        case refused(streamID: UInt16, reason: String)
    }

    /// Counters for `/stats`.
    public struct Statistics: Sendable, Equatable {
        public var channelsOpen = 0
        public var channelsOpened = 0
        /// Channels closed for a fault of the peer's or by either side.
        public var channelsClosed = 0
        /// Messages from the peer (DCEP's own not counted), those that closed their channel included.
        public var messagesIn = 0
        public var messagesOut = 0
        /// The bytes of the messages delivered and sent (an empty message counts 0).
        public var bytesIn = 0
        public var bytesOut = 0
        /// Messages we could not send (the SCTP send buffer full, the association down).
        public var sendFailures = 0
        public var sctpPacketsIn = 0
        public var sctpPacketsOut = 0
        public init() {}
    }

    /// Our `a=max-message-size` (RFC 8841 §6, bytes): 256 KiB, what Chromium and Firefox advertise.
    public static let maxMessageSize = 262_144
    /// The sub-protocol of the echo channel.
    public static let echoProtocol = "screencast-echo"

    public private(set) var statistics = Statistics()
    private let association: SCTPAssociation
    private var channels: DataChannelEstablishment
    private var events: [Event] = []

    /// - Parameters:
    ///   - parity: even when we are the DTLS client, odd as the server (RFC 8832 §6).
    ///   - remoteMaxMessageSize: the peer's `a=max-message-size` (bytes; 0 there means any: pass `Int.max`).
    ///   - wake: called on usrsctp's thread when ``poll()`` has something to do.
    /// - Throws: ``DataChannelError/sctp(_:)`` when usrsctp refuses the socket.
    public init(parity: DataChannelEstablishment.Parity, remoteMaxMessageSize: Int, wake: @escaping @Sendable () -> Void) throws(DataChannelError) {
        association = try SCTPAssociation(maxMessageSize: Self.maxMessageSize, wake: wake)
        channels = DataChannelEstablishment(
            parity: parity, maxMessageSize: Self.maxMessageSize, remoteMaxMessageSize: remoteMaxMessageSize,
            streamCount: SCTPAssociation.streamCount)
    }

    /// For fuzz targets only: usrsctp skips the CRC32c of every packet in this process from now on
    /// (``SCTPStack``), so fuzzed packets reach the chunk parsers.
    public static func skipChecksumsForFuzzing() { SCTPStack.shared.skipChecksumsForFuzzing() }

    /// Starts the association (both sides send INIT).
    public func start() throws(DataChannelError) { try association.connect() }

    /// One SCTP packet from the peer; returns what it led to.
    public func receive(_ packet: UnsafeRawBufferPointer) -> [Event] {
        association.receive(packet)
        return poll()
    }

    /// Reads what the association holds (after a wake-up); returns what it led to.
    public func poll() -> [Event] {
        association.poll { event in
            switch event {
            case .up: events.append(.up)
            case .lost(let reason): events.append(.lost(reason))
            case .message(let stream, let ppid, let payload):
                if ppid != PayloadProtocol.dcep.rawValue { statistics.messagesIn += 1 }
                carryOut(channels.received(streamID: stream, ppid: ppid, payload: payload))
            case .messageTooLarge(let stream, let size):
                statistics.messagesIn += 1
                carryOut(channels.messageTooLarge(streamID: stream, size: size))
            case .peerResetStreams(let streams):
                for stream in streams { carryOut(channels.peerResetStream(stream)) }
            }
        }
        guard !events.isEmpty else { return [] }  // most packets (SACKs, parts of messages) make no event
        let out = events
        events.removeAll()
        return out
    }

    /// The SCTP packets to send over DTLS, oldest first.
    public func takePackets() -> [[UInt8]] {
        let packets = association.takePackets()
        statistics.sctpPacketsOut += packets.count
        statistics.sctpPacketsIn = association.packetsIn
        return packets
    }

    /// Opens a channel of ours.
    /// - Throws: what ``DataChannelEstablishment/open(label:protocol:reliability:)`` throws, and
    ///   ``DataChannelError/notConnected`` before the association is up.
    public func open(label: String, protocol proto: String = "", reliability: ChannelReliability = .init()) throws(DataChannelError) -> [Event] {
        guard association.isUp else { throw .notConnected }
        carryOut(try channels.open(label: label, protocol: proto, reliability: reliability))
        let out = events
        events.removeAll()
        return out
    }

    /// Sends a message on an open channel.
    /// - Throws: ``DataChannelError/noSuchChannel(_:)``, ``DataChannelError/messageTooLarge(size:limit:)``
    ///   (over the peer's limit), ``DataChannelError/notConnected``, ``DataChannelError/sctp(_:)``.
    public func send(_ message: DataChannelEstablishment.Message, on streamID: UInt16) throws(DataChannelError) {
        let action = try channels.send(message, on: streamID)
        guard case .send(let stream, let ppid, let bytes, let reliability) = action else { return }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(DataChannelError) in
                try association.send(streamID: stream, ppid: ppid.rawValue, bytes: raw, reliability: reliability)
            }
        }
        if case .failure = result { statistics.sendFailures += 1 }
        try result.get()
        statistics.messagesOut += 1
        statistics.bytesOut += message.count
    }

    /// Closes a channel (its stream reset); returns the `closed` event.
    public func close(_ streamID: UInt16, reason: String) -> [Event] {
        carryOut(channels.close(streamID, reason: reason))
        let out = events
        events.removeAll()
        return out
    }

    /// The channels open now.
    public var openChannels: [DataChannelEstablishment.Channel] { channels.openChannels }

    /// Aborts the association (an ABORT to take with ``takePackets()``).
    public func close() { association.close() }

    // MARK: Internals

    private func carryOut(_ actions: [DataChannelEstablishment.Action]) {
        for action in actions {
            switch action {
            case .send(let stream, let ppid, let bytes, let reliability):
                let sent = bytes.withUnsafeBytes { raw in
                    Result { () throws(DataChannelError) in
                        try association.send(streamID: stream, ppid: ppid.rawValue, bytes: raw, reliability: reliability)
                    }
                }
                if case .failure = sent { statistics.sendFailures += 1 }
            case .resetStream(let stream):
                association.resetStream(stream)
            case .opened(let channel):
                statistics.channelsOpen += 1
                statistics.channelsOpened += 1
                events.append(.opened(channel))
            case .message(let stream, let message):
                statistics.bytesIn += message.count
                events.append(.message(streamID: stream, message))
                if channels.channel(stream)?.protocol == Self.echoProtocol {
                    try? send(message, on: stream)
                }
            case .closed(let stream, let reason):
                statistics.channelsOpen -= 1
                statistics.channelsClosed += 1
                events.append(.closed(streamID: stream, reason: reason))
            case .refused(let stream, let reason):
                events.append(.refused(streamID: stream, reason: reason))
            }
        }
    }
}
