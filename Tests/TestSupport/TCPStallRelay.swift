import Foundation
import Glibc
import Synchronization

/// A TCP relay on 127.0.0.1 in front of a server, standing for a server that stops reading: connections to
/// ``port`` go on to `127.0.0.1:target`; while ``pause()`` holds, nothing more is read from the clients, so
/// their writes block once the relay's small receive buffer (``bufferBytes``, fixed: the kernel does not grow
/// it) and their own send buffer are full. (A SIGSTOPped server alone does not do that on loopback at a low
/// bitrate: Linux grows the stopped process's receive buffer with the data and takes hundreds of kB.)
public final class TCPStallRelay: @unchecked Sendable {
    // @unchecked Sendable: the listening descriptor never changes; mutable state is in Mutexes.
    public let port: UInt16
    /// The receive buffer of each accepted socket and the send buffer towards the server, bytes.
    public static let bufferBytes: Int32 = 8192
    private let target: UInt16
    private let listener: Int32
    private let paused = Mutex(false)
    private let sockets = Mutex<[Int32]>([])
    private let stopped = Mutex(false)

    public init(to target: UInt16) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw LoopbackPort.Failure(description: "socket: errno \(errno)") }
        var size = Self.bufferBytes
        setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))  // inherited by accepted sockets
        var address = Self.loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 16) == 0 else { throw LoopbackPort.Failure(description: "bind/listen: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        self.listener = listener
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    /// Stops reading from the clients.
    public func pause() { paused.withLock { $0 = true } }
    /// Reads again.
    public func resume() { paused.withLock { $0 = false } }

    /// Closes the listener and every connection.
    public func stop() {
        guard !stopped.withLock({ s in defer { s = true }; return s }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets.withLock({ $0 }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    private func acceptLoop() {
        while !stopped.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var size = Self.bufferBytes
            setsockopt(server, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var address = Self.loopback(target)
            let connected = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else { close(client); close(server); continue }
            sockets.withLock { $0 += [client, server] }
            Thread { [self] in pump(from: client, to: server, pausable: true) }.start()
            Thread { [self] in pump(from: server, to: client, pausable: false) }.start()
        }
    }

    private func pump(from source: Int32, to sink: Int32, pausable: Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        defer { shutdown(source, Int32(SHUT_RDWR)); shutdown(sink, Int32(SHUT_RDWR)) }
        while true {
            while pausable, paused.withLock({ $0 }), !stopped.withLock({ $0 }) { usleep(10_000) }
            let n = read(source, &buffer, buffer.count)
            guard n > 0 else { return }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes { write(sink, $0.baseAddress! + offset, n - offset) }
                guard w > 0 else { return }
                offset += w
            }
        }
    }
}
