import FrameWire

/// Who is on the other end of a server connection, from `SO_PEERCRED` at connect time.
public struct SenderInfo: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The sender's process id (as seen from the server's PID namespace; 0 when unknown).
    public var pid: Int32
    /// The sender's user id.
    public var uid: UInt32
    /// The server's running count of accepted connections, from 1; unique per ``FrameServer``
    /// (refused connections use a number too).
    public var connection: Int

    /// A sender's identity (normally made by the server from `SO_PEERCRED`).
    public init(pid: Int32, uid: UInt32, connection: Int) {
        self.pid = pid
        self.uid = uid
        self.connection = connection
    }

    /// `connection N (pid P, uid U)`.
    public var description: String { "connection \(connection) (pid \(pid), uid \(uid))" }
}

/// Why a sender's connection ended ("source ended").
public enum SourceEndReason: Sendable, Equatable, CustomStringConvertible {
    /// The byte stream ended: cleanly between frames (`.eof`), inside a frame (`.truncated`, the
    /// partial frame is not delivered), or by breaking the wire format (`.error`).
    case stream(FrameStreamEnd)
    /// Reading from the socket failed (e.g. `ECONNRESET`); frames delivered before stand.
    case ioError(FrameSocketError)
    /// ``FrameServer/stop()`` closed the connection.
    case serverStopped
    /// The sender completed no frame within the server's frame timeout (seconds) after connecting or after
    /// its previous frame: a silent or stalled client, dropped so the next sender can connect.
    case frameTimeout(Double)

    /// `eof`, `truncated`, `error`, `io-error`, `server-stopped` or `frame-timeout` (for logs).
    public var name: String {
        switch self {
        case .stream(let end): end.name
        case .ioError: "io-error"
        case .serverStopped: "server-stopped"
        case .frameTimeout: "frame-timeout"
        }
    }

    /// The name plus detail: `eof`, `error: bad status line: …`, `io-error: read failed: …`.
    public var description: String {
        switch self {
        case .stream(let end): end.description
        case .ioError(let error): "io-error: \(error)"
        case .serverStopped: "server-stopped"
        case .frameTimeout(let seconds): "frame-timeout: no complete frame for \(seconds) s"
        }
    }
}

/// Why a connection was closed right after `accept`.
public enum SenderRefusal: String, Sendable, Equatable {
    /// Another sender is connected; one sender at a time, the first keeps going.
    case busy
    /// The peer runs as another user (neither the server's uid nor root).
    case foreignUser = "foreign-user"
    /// `SO_PEERCRED` gave no credentials, so the peer's user is unknown.
    case noCredentials = "no-credentials"
}

/// What a ``FrameServer`` tells its owner, in order, from its reader thread.
public enum FrameServerEvent: Sendable {
    /// A sender was accepted; frames from it follow.
    case senderConnected(SenderInfo)
    /// One complete frame from the current sender.
    case frame(Frame, SenderInfo)
    /// One complete sound message from the current sender (Protocol/frame-wire.md §2.10), in stream order
    /// with the pictures. A reader that does not take sound ignores it; it never affects the pictures.
    case sound(SoundMessage, SenderInfo)
    /// The current sender's connection ended; the server waits for the next sender.
    case senderEnded(SenderInfo, SourceEndReason)
    /// A connection was closed right away (a second sender, or another user's process).
    case senderRefused(SenderInfo, SenderRefusal)
}
