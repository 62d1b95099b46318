internal import CUsrSCTP
import Glibc

/// One SCTP association (RFC 9260) over a datagram transport of the owner's (DTLS, RFC 8261), by usrsctp in
/// conn mode: the one owner of its usrsctp socket.
///
/// ```
///   owner: receive(packet) ─▶ usrsctp_conninput ─┐            usrsctp timer thread ─┐
///                                                ▼                                  ▼
///                        output callback / upcall ─▶ SCTPConduit (lock) ─▶ wake ─▶ owner: poll
///   owner: takePackets() ◀── SCTP packets (≤ mtu bytes each) to send over DTLS
///   owner: poll { event } ◀── usrsctp_recvv: messages (reassembled), association up/lost, stream resets
///   owner: send(...) ─▶ usrsctp_sendv;  resetStream(id) ─▶ SCTP_RESET_STREAMS;  close() ─▶ ABORT
/// ```
///
/// Both ends connect at once on port 5000 (`a=sctp-port`, RFC 8841 §5; usrsctp resolves the INIT
/// collision, RFC 9260 §5.2.4), as browsers do. Messages larger than ``maxMessageSize`` are not kept: the
/// parts read so far are dropped and ``Event/messageTooLarge(streamID:size:)`` says so once.
///
/// Thread safety: every method must be called by one owner, one call at a time (the peer connection's
/// queue); usrsctp's own threads reach only the ``SCTPConduit`` (see ``SCTPStack``), and `wake` is called
/// on them when there is something to collect: the owner then calls ``takePackets()`` and ``poll(_:)``.
public final class SCTPAssociation {
    /// What ``poll(_:)`` found.
    public enum Event {
        /// The association is up (SCTP_COMM_UP).
        case up
        /// It ended (lost, aborted by the peer, or could not start); the reason in words.
        case lost(String)
        /// One whole message; the bytes are valid only during the handler.
        case message(streamID: UInt16, ppid: UInt32, payload: UnsafeRawBufferPointer)
        /// A message over ``maxMessageSize`` was dropped (its size so far, bytes).
        case messageTooLarge(streamID: UInt16, size: Int)
        /// The peer reset these outgoing streams of its own (RFC 6525): their channels close.
        case peerResetStreams([UInt16])
    }

    /// The SCTP port both ends use (`a=sctp-port:5000`, RFC 8841 §5, the browsers' value).
    public static let port: UInt16 = 5000
    /// Streams each way (the INIT's OS and MIS): 1024, as Chromium and Firefox ask; channels use their ids.
    public static let streamCount: UInt16 = 1024
    /// The SCTP packet size (bytes): with DTLS's AEAD record overhead (≤ 37 bytes) a datagram stays within
    /// 1237 bytes, under the 1280-byte IPv6 minimum with UDP and IP headers.
    public static let mtu: UInt32 = 1200

    /// The largest `maxMessageSize` an association takes (bytes): 16 MiB.
    public static let maxMessageSizeLimit = 16 << 20
    /// The largest message kept (bytes).
    public let maxMessageSize: Int
    public private(set) var isUp = false
    public private(set) var endReason: String?
    /// SCTP packets in (to usrsctp) and out (from it), for `/stats`.
    public private(set) var packetsIn = 0
    public private(set) var packetsOut = 0

    private let conduit: SCTPConduit
    private let address: UnsafeMutableRawPointer
    private var socket: OpaquePointer?
    /// One read's buffer (reused) and the message being put together from partial reads.
    private var readBuffer: [UInt8]
    private var assembling: [UInt8] = []
    private var assemblingStream: UInt16?
    /// The stream whose oversized message is being read and dropped up to its end.
    private var discardingStream: UInt16?
    private var discardedBytes = 0

    /// Makes the socket (bound to ``port``), and sets it up for WebRTC; nothing is sent before ``connect()``.
    /// - Parameters:
    ///   - maxMessageSize: the largest message kept (bytes, 1…16 MiB; our `a=max-message-size`).
    ///   - wake: called on usrsctp's threads when packets or messages wait for ``takePackets()`` / ``poll(_:)``.
    /// - Throws: ``DataChannelError/sctp(_:)`` when usrsctp refuses the socket or an option, or for a
    ///   `maxMessageSize` outside its range.
    public init(maxMessageSize: Int, wake: @escaping @Sendable () -> Void) throws(DataChannelError) {
        guard (1...Self.maxMessageSizeLimit).contains(maxMessageSize) else {
            throw .sctp("maxMessageSize \(maxMessageSize) outside 1...\(Self.maxMessageSizeLimit)")
        }
        self.maxMessageSize = maxMessageSize
        readBuffer = [UInt8](repeating: 0, count: 64 << 10)
        conduit = SCTPConduit(wake: wake)
        address = SCTPStack.shared.register(conduit)
        guard let socket = usrsctp_socket(AF_CONN, Int32(SOCK_STREAM.rawValue), Int32(IPPROTO_SCTP), nil, nil, 0, nil) else {
            SCTPStack.shared.deregister(address)
            throw .sctp("usrsctp_socket: \(Self.errnoText())")
        }
        self.socket = socket
        let configured = cusrsctp_configure(socket, Self.streamCount, Self.mtu, UInt32(readBuffer.count))
        guard configured == 0 else {
            let reason = Self.errnoText()
            close()
            throw .sctp("socket option step \(-configured): \(reason)")
        }
        usrsctp_set_upcall(socket, SCTPStack.upcall, address)
        guard cusrsctp_bind(socket, address, Self.port) == 0 else {
            let reason = Self.errnoText()
            close()
            throw .sctp("usrsctp_bind: \(reason)")
        }
    }

    deinit { close() }

    /// Sends the INIT (the association starts; ``Event/up`` follows).
    /// - Throws: ``DataChannelError/sctp(_:)``.
    public func connect() throws(DataChannelError) {
        guard let socket else { throw .notConnected }
        conduit.enter()
        defer { conduit.leave() }
        guard cusrsctp_connect(socket, address, Self.port) == 0 else { throw .sctp("usrsctp_connect: \(Self.errnoText())") }
    }

    /// One SCTP packet from the peer (a DTLS record's plaintext). usrsctp checks it (CRC32c, verification
    /// tag) and drops what is wrong.
    public func receive(_ packet: UnsafeRawBufferPointer) {
        guard socket != nil, let base = packet.baseAddress, !packet.isEmpty else { return }
        packetsIn += 1
        conduit.enter()
        usrsctp_conninput(address, base, packet.count, 0)
        conduit.leave()
    }

    /// The SCTP packets to send, oldest first.
    public func takePackets() -> [[UInt8]] {
        let packets = conduit.take().packets
        packetsOut += packets.count
        return packets
    }

    /// Reads what usrsctp holds for us (messages, notifications) and hands each to `handler`. Call after
    /// ``receive(_:)`` and on each wake-up.
    public func poll(_ handler: (Event) -> Void) {
        guard let socket else { return }
        conduit.enter()
        defer { conduit.leave() }
        while self.socket != nil {
            let got = readBuffer.withUnsafeMutableBytes { buffer in
                cusrsctp_receive(socket, buffer.baseAddress, buffer.count)
            }
            guard got.length >= 0 else { return }  // EWOULDBLOCK: nothing more (or the socket is gone)
            let count = got.length
            let complete = got.flags & Int32(MSG_EOR) != 0
            if got.flags & Int32(MSG_NOTIFICATION) != 0 {
                guard complete else { continue }  // notifications fit the buffer; never partial in practice
                readBuffer.withUnsafeBytes { notification(UnsafeRawBufferPointer(rebasing: $0[0..<count]), handler) }
                continue
            }
            deliver(stream: got.sid, ppid: got.ppid, count: count, complete: complete, handler)
        }
    }

    /// Sends one message (`bytes` non-empty).
    /// - Throws: ``DataChannelError/notConnected``, ``DataChannelError/sctp(_:)`` (the send buffer is
    ///   full: EWOULDBLOCK, or usrsctp refused).
    public func send(streamID: UInt16, ppid: UInt32, bytes: UnsafeRawBufferPointer, reliability: ChannelReliability) throws(DataChannelError) {
        guard let socket, isUp else { throw .notConnected }
        let (policy, value): (UInt16, UInt32)
        switch reliability.limit {
        case .reliable: (policy, value) = (UInt16(SCTP_PR_SCTP_NONE), 0)
        case .maxRetransmits(let count): (policy, value) = (UInt16(SCTP_PR_SCTP_RTX), count)
        case .lifetimeMillis(let ms): (policy, value) = (UInt16(SCTP_PR_SCTP_TTL), ms)
        }
        conduit.enter()
        defer { conduit.leave() }
        let sent = cusrsctp_send(socket, streamID, ppid, reliability.ordered ? 0 : 1, policy, value, bytes.baseAddress, bytes.count)
        guard sent == bytes.count else {
            throw .sctp(sent < 0 ? "usrsctp_sendv: \(Self.errnoText())" : "usrsctp_sendv took \(sent) of \(bytes.count) bytes")
        }
    }

    /// Resets our outgoing stream `streamID` (closes its channel, RFC 8831 §6.7).
    public func resetStream(_ streamID: UInt16) {
        guard let socket, isUp else { return }
        conduit.enter()
        defer { conduit.leave() }
        _ = cusrsctp_reset_outgoing(socket, streamID)
    }

    /// Aborts the association (SO_LINGER 0: an ABORT goes out, collect it with ``takePackets()``) and frees
    /// the socket. Idempotent.
    public func close() {
        guard let socket else { return }
        self.socket = nil
        conduit.enter()
        usrsctp_close(socket)
        conduit.leave()
        SCTPStack.shared.deregister(address)
        isUp = false
    }

    // MARK: Internals

    private func deliver(stream: UInt16, ppid: UInt32, count: Int, complete: Bool, _ handler: (Event) -> Void) {
        if discardingStream == stream {
            discardedBytes += count
            if complete {
                discardingStream = nil
                handler(.messageTooLarge(streamID: stream, size: discardedBytes))
            }
            return
        }
        if assemblingStream != nil, assemblingStream != stream {  // never interleaved (no I-DATA): drop it
            assembling.removeAll(keepingCapacity: true)
            assemblingStream = nil
        }
        if complete, assemblingStream == nil {
            guard count <= maxMessageSize else { return handler(.messageTooLarge(streamID: stream, size: count)) }
            readBuffer.withUnsafeBytes { handler(.message(streamID: stream, ppid: ppid, payload: UnsafeRawBufferPointer(rebasing: $0[0..<count]))) }
            return
        }
        guard assembling.count + count <= maxMessageSize else {
            discardedBytes = assembling.count + count
            assembling.removeAll(keepingCapacity: false)
            assemblingStream = nil
            if complete {
                handler(.messageTooLarge(streamID: stream, size: discardedBytes))
            } else {
                discardingStream = stream
            }
            return
        }
        readBuffer.withUnsafeBytes { assembling.append(contentsOf: $0[0..<count]) }
        assemblingStream = stream
        guard complete else { return }
        assembling.withUnsafeBytes { handler(.message(streamID: stream, ppid: ppid, payload: $0)) }
        assembling.removeAll(keepingCapacity: true)
        assemblingStream = nil
    }

    private func notification(_ bytes: UnsafeRawBufferPointer, _ handler: (Event) -> Void) {
        let read = cusrsctp_read_notification(bytes.baseAddress, bytes.count)
        switch Int32(read.type) {
        case Int32(SCTP_ASSOC_CHANGE):
            switch Int32(read.state) {
            case Int32(SCTP_COMM_UP):
                guard !isUp, endReason == nil else { return }
                isUp = true
                handler(.up)
            case Int32(SCTP_COMM_LOST), Int32(SCTP_SHUTDOWN_COMP), Int32(SCTP_CANT_STR_ASSOC):
                let reason = read.state == UInt16(SCTP_COMM_LOST) ? "association lost (error \(read.error))"
                    : read.state == UInt16(SCTP_SHUTDOWN_COMP) ? "association shut down" : "association could not start"
                isUp = false
                guard endReason == nil else { return }
                endReason = reason
                handler(.lost(reason))
            default: break
            }
        case Int32(SCTP_STREAM_RESET_EVENT):
            // The peer's outgoing streams reset: our incoming ones (RFC 6525 §5.2.2 as usrsctp reports it).
            guard read.flags & UInt16(SCTP_STREAM_RESET_INCOMING_SSN) != 0,
                  read.flags & UInt16(SCTP_STREAM_RESET_DENIED | SCTP_STREAM_RESET_FAILED) == 0
            else { return }
            let streams = (0..<read.stream_count).map { cusrsctp_reset_stream_at(bytes.baseAddress, $0) }
            if !streams.isEmpty { handler(.peerResetStreams(streams)) }
        default: break
        }
    }

    private static func errnoText() -> String {
        let code = cusrsctp_errno()
        return "\(String(cString: strerror(code))) (errno \(code))"
    }
}
