/// One association's data channels, sans-I/O: the Data Channel Establishment Protocol (RFC 8832) and the
/// rules of RFC 8831 for what arrives on a stream. SCTP messages and stream resets in, ``Action``s out; the
/// owner (``DataChannelSession``) carries them out on the association.
///
/// ```
///   peer opens:  DATA_CHANNEL_OPEN on stream s (PPID 50) ─▶ channel open ─▶ DATA_CHANNEL_ACK on s, .opened
///   we open:     open(label:) ─▶ OPEN on a stream of our parity ─▶ open at once (ordered: RFC 8832 §6)
///   messages:    PPID 51 (UTF-8), 53 (binary), 56/57 (empty) on an open stream ─▶ .message
///   closing:     either side resets its outgoing stream (RFC 8831 §6.7, RFC 6525); we answer a peer's
///                reset with ours and the channel is gone
///   bad input:   a malformed or unknown DCEP message, an unknown or deprecated PPID, a string that is not
///                UTF-8, a message over the limit, data on a stream with no channel ─▶ that stream is reset
///                and .closed(reason); the association and the other channels go on
/// ```
///
/// Stream ids (RFC 8832 §6): the DTLS client opens channels on even streams, the server on odd ones; an OPEN
/// from the peer on a stream of our parity is refused by resetting that stream.
public struct DataChannelEstablishment: Sendable {
    /// One channel as both sides agreed it.
    public struct Channel: Sendable, Equatable {
        /// The SCTP stream id (both directions).
        public var streamID: UInt16
        /// The label (`RTCDataChannel.label`), UTF-8, at most ``DCEPMessage/maxLabelBytes`` bytes.
        public var label: String
        /// The sub-protocol (`RTCDataChannel.protocol`).
        public var `protocol`: String
        /// How it delivers (DATA_CHANNEL_OPEN's Channel Type and Reliability Parameter).
        public var reliability: ChannelReliability
        /// True when the peer opened it.
        public var openedByPeer: Bool

        /// A channel as given.
        public init(streamID: UInt16, label: String, protocol proto: String, reliability: ChannelReliability, openedByPeer: Bool) {
            self.streamID = streamID
            self.label = label
            self.protocol = proto
            self.reliability = reliability
            self.openedByPeer = openedByPeer
        }
    }

    /// A message on a channel: UTF-8 text or bytes (RFC 8831 §6.6).
    public enum Message: Sendable, Equatable {
        case string(String)
        case binary([UInt8])

        /// The message's size on the wire (bytes; an empty one is sent as one byte, not counted).
        public var count: Int {
            switch self {
            case .string(let text): text.utf8.count
            case .binary(let bytes): bytes.count
            }
        }
    }

    /// What the owner does.
    public enum Action: Sendable, Equatable {
        /// Send `bytes` on `streamID` with `ppid` (ordered or not, with the channel's reliability).
        case send(streamID: UInt16, ppid: PayloadProtocol, bytes: [UInt8], reliability: ChannelReliability)
        /// Reset our outgoing stream (RFC 6525 §5.1.2).
        case resetStream(UInt16)
        /// A channel is open (the peer's OPEN was acknowledged, or ours was sent).
        case opened(Channel)
        /// A message arrived on an open channel.
        case message(streamID: UInt16, Message)
        /// A channel closed: by the peer, by us, or for a fault of the peer's (the reason says which).
        case closed(streamID: UInt16, reason: String)
        /// A stream with no channel was reset: an OPEN refused, or data on it (the reason says which).
        case refused(streamID: UInt16, reason: String)
    }

    enum Phase: Sendable, Equatable {
        case open
        /// We reset our outgoing stream; the peer's reset of its own completes the close.
        case closing
    }

    /// Which streams we open channels on: even as the DTLS client, odd as the server (RFC 8832 §6).
    public enum Parity: Sendable { case even, odd }

    /// The most channels one association keeps open (both sides' together); an OPEN beyond is refused by
    /// resetting its stream. A viewer page opens one.
    public static let maxChannels = 64
    /// Stream ids go up to 65534 (65535 is reserved, RFC 8831 §6.5); we use fewer streams than that
    /// (``SCTPAssociation/streamCount``).
    public let streamCount: UInt16
    /// The largest message we take (bytes, our `a=max-message-size`, RFC 8841 §6).
    public let maxMessageSize: Int
    /// The largest message the peer takes (its `a=max-message-size`; 0 there means "any", kept as Int.max).
    public let remoteMaxMessageSize: Int
    /// Which stream ids we open (RFC 8832 §6: even for the DTLS client, odd for the server).
    public let parity: Parity

    private(set) var channels: [UInt16: (Channel, Phase)] = [:]

    /// No channel yet. `maxMessageSize` and `remoteMaxMessageSize` in bytes (our and the peer's
    /// `a=max-message-size`), `streamCount` the SCTP streams negotiated (the highest stream id + 1).
    public init(parity: Parity, maxMessageSize: Int, remoteMaxMessageSize: Int, streamCount: UInt16) {
        self.parity = parity
        self.maxMessageSize = maxMessageSize
        self.remoteMaxMessageSize = remoteMaxMessageSize
        self.streamCount = streamCount
    }

    /// The channels open now (not those closing).
    public var openChannels: [Channel] {
        channels.values.filter { $0.1 == .open }.map(\.0).sorted { $0.streamID < $1.streamID }
    }

    /// The channel on `streamID` while it is open.
    public func channel(_ streamID: UInt16) -> Channel? {
        guard let (channel, phase) = channels[streamID], phase == .open else { return nil }
        return channel
    }

    // MARK: Events from the association

    /// One whole SCTP message from the peer on `streamID` with `ppid`.
    public mutating func received(streamID: UInt16, ppid: UInt32, payload: UnsafeRawBufferPointer) -> [Action] {
        if ppid == PayloadProtocol.dcep.rawValue { return receivedDCEP(streamID, payload) }
        guard let (_, phase) = channels[streamID] else {
            // Data before any OPEN: the stream is reset (RFC 8832 §6 leaves no way to use it).
            return [.resetStream(streamID), .refused(streamID: streamID, reason: "data on stream \(streamID), which has no channel")]
        }
        guard phase == .open else { return [] }  // the tail of a channel we are closing
        guard payload.count <= maxMessageSize else {
            return fault(streamID, .messageTooLarge(size: payload.count, limit: maxMessageSize))
        }
        switch PayloadProtocol(rawValue: ppid) {
        case .string:
            guard let text = String(validating: payload, as: UTF8.self) else { return fault(streamID, .invalidUTF8) }
            return [.message(streamID: streamID, .string(text))]
        case .binary: return [.message(streamID: streamID, .binary(Array(payload)))]
        case .stringEmpty: return [.message(streamID: streamID, .string(""))]
        case .binaryEmpty: return [.message(streamID: streamID, .binary([]))]
        case .dcep, .stringPartial, .binaryPartial, nil: return fault(streamID, .unsupportedPayloadProtocol(ppid))
        }
    }

    /// The association's reassembly gave up on a message over the limit (``SCTPAssociation``): that channel
    /// closes.
    public mutating func messageTooLarge(streamID: UInt16, size: Int) -> [Action] {
        guard channels[streamID] != nil else { return [] }
        return fault(streamID, .messageTooLarge(size: size, limit: maxMessageSize))
    }

    /// The peer reset its outgoing `streamID` (RFC 8831 §6.7): we reset ours (unless we began the close) and
    /// the channel is gone.
    public mutating func peerResetStream(_ streamID: UInt16) -> [Action] {
        guard let (_, phase) = channels.removeValue(forKey: streamID) else { return [] }
        switch phase {
        case .open: return [.resetStream(streamID), .closed(streamID: streamID, reason: "closed by the peer")]
        case .closing: return []
        }
    }

    // MARK: Our requests

    /// Opens a channel on the next free stream of our parity: the OPEN goes out and, as RFC 8832 §6 lets an
    /// ordered channel's messages follow it at once, the channel is open now.
    /// - Throws: ``DataChannelError/malformedDCEP(_:)`` for a label or protocol over ``DCEPMessage/maxLabelBytes``,
    ///   ``DataChannelError/tooManyChannels(limit:)``.
    public mutating func open(label: String, protocol proto: String = "", reliability: ChannelReliability = .init()) throws(DataChannelError) -> [Action] {
        guard label.utf8.count <= DCEPMessage.maxLabelBytes, proto.utf8.count <= DCEPMessage.maxLabelBytes else {
            throw .malformedDCEP("label or protocol over \(DCEPMessage.maxLabelBytes) bytes")
        }
        guard channels.count < Self.maxChannels else { throw .tooManyChannels(limit: Self.maxChannels) }
        var stream: UInt16 = parity == .even ? 0 : 1
        while channels[stream] != nil {
            guard stream < streamCount - 2 else { throw .tooManyChannels(limit: Self.maxChannels) }
            stream += 2
        }
        guard stream < streamCount else { throw .tooManyChannels(limit: Self.maxChannels) }
        let channel = Channel(streamID: stream, label: label, protocol: proto, reliability: reliability, openedByPeer: false)
        channels[stream] = (channel, .open)
        let open = DCEPMessage.open(label: label, protocol: proto, reliability: reliability, priority: 256)
        // DCEP messages are always sent reliably and in order (RFC 8832 §6).
        return [.send(streamID: stream, ppid: .dcep, bytes: open.bytes, reliability: .init()), .opened(channel)]
    }

    /// The action that sends `message` on `streamID` (PPID 51/53, or 56/57 with one zero byte when empty).
    /// - Throws: ``DataChannelError/noSuchChannel(_:)``, ``DataChannelError/messageTooLarge(size:limit:)``
    ///   (over the peer's `a=max-message-size`).
    public func send(_ message: Message, on streamID: UInt16) throws(DataChannelError) -> Action {
        guard let channel = channel(streamID) else { throw .noSuchChannel(streamID) }
        guard message.count <= remoteMaxMessageSize else { throw .messageTooLarge(size: message.count, limit: remoteMaxMessageSize) }
        let (ppid, bytes): (PayloadProtocol, [UInt8])
        switch message {
        case .string(let text): (ppid, bytes) = text.isEmpty ? (.stringEmpty, [0]) : (.string, Array(text.utf8))
        case .binary(let data): (ppid, bytes) = data.isEmpty ? (.binaryEmpty, [0]) : (.binary, data)
        }
        return .send(streamID: streamID, ppid: ppid, bytes: bytes, reliability: channel.reliability)
    }

    /// Closes the channel on `streamID`: our outgoing stream is reset; the peer answers with its own.
    public mutating func close(_ streamID: UInt16, reason: String) -> [Action] {
        guard let (channel, phase) = channels[streamID], phase == .open else { return [] }
        channels[streamID] = (channel, .closing)
        return [.resetStream(streamID), .closed(streamID: streamID, reason: reason)]
    }

    // MARK: Internals

    private mutating func receivedDCEP(_ streamID: UInt16, _ payload: UnsafeRawBufferPointer) -> [Action] {
        let message: DCEPMessage
        do { message = try DCEPMessage(parsing: payload) } catch { return fault(streamID, error) }
        switch message {
        case .ack:
            // The answer to our OPEN: the channel is open already (we sent ordered); a stray ACK is harmless.
            return []
        case .open(let label, let proto, let reliability, _):
            if let (_, phase) = channels[streamID] {
                if phase == .closing { return [] }
                return fault(streamID, .malformedDCEP("DATA_CHANNEL_OPEN on stream \(streamID), whose channel is open"))
            }
            let theirs: Parity = parity == .even ? .odd : .even
            guard streamID < streamCount, (streamID % 2 == 0) == (theirs == .even) else {
                return [.resetStream(streamID), .refused(streamID: streamID, reason: "DATA_CHANNEL_OPEN on stream \(streamID), not of the peer's parity (RFC 8832 §6)")]
            }
            guard channels.count < Self.maxChannels else {
                return [.resetStream(streamID), .refused(streamID: streamID, reason: "\(DataChannelError.tooManyChannels(limit: Self.maxChannels))")]
            }
            let channel = Channel(streamID: streamID, label: label, protocol: proto, reliability: reliability, openedByPeer: true)
            channels[streamID] = (channel, .open)
            return [.send(streamID: streamID, ppid: .dcep, bytes: DCEPMessage.ack.bytes, reliability: .init()), .opened(channel)]
        }
    }

    /// The peer's fault on `streamID`: the channel (if any) closes with the error as its reason.
    private mutating func fault(_ streamID: UInt16, _ error: DataChannelError) -> [Action] {
        guard let (channel, phase) = channels[streamID] else {
            return [.resetStream(streamID), .refused(streamID: streamID, reason: "\(error)")]
        }
        guard phase == .open else { return [] }
        channels[streamID] = (channel, .closing)
        return [.resetStream(streamID), .closed(streamID: streamID, reason: "\(error)")]
    }
}
