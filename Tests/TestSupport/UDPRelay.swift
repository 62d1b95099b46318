import Foundation
import Glibc
import Synchronization

/// A UDP relay on 127.0.0.1 standing for a network path that can break: datagrams to ``port`` go on to
/// `127.0.0.1:target` from a second socket, the answers come back from ``port`` to whoever sent last.
/// An ICE peer given `port` as the other side's candidate reaches it through the relay (the other side
/// learns the relay's second socket as a peer-reflexive candidate); ``block()`` then drops everything
/// both ways, as a dead path does, so checks and RFC 7675 consent go unanswered.
public final class UDPRelay: @unchecked Sendable {
    // @unchecked Sendable: the descriptors never change; mutable state is in Mutexes; one thread reads.
    public let port: UInt16
    private let target: UInt16
    private let front: Int32
    private let back: Int32
    private let blocked = Mutex(false)
    private let stopped = Mutex(false)
    private let counts = Mutex((forwarded: 0, dropped: 0))
    private let done = DispatchSemaphore(value: 0)

    /// Binds both sockets and starts the relaying thread.
    /// - Throws: ``LoopbackPort/Failure`` when a socket cannot be made or bound.
    public init(to target: UInt16) throws {
        self.target = target
        front = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        back = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard front >= 0, back >= 0 else { throw LoopbackPort.Failure(description: "socket: errno \(errno)") }
        port = try LoopbackPort.bindUDP(front, port: 0)
        _ = try LoopbackPort.bindUDP(back, port: 0)
        let thread = Thread { [self] in
            relay()
            done.signal()
        }
        thread.name = "udp-relay"
        thread.start()
    }

    deinit { stop() }

    /// The path breaks: from now on every datagram either way is dropped.
    public func block() { blocked.withLock { $0 = true } }
    public func unblock() { blocked.withLock { $0 = false } }

    /// Datagrams relayed and dropped so far, both ways.
    public var forwarded: Int { counts.withLock { $0.forwarded } }
    public var dropped: Int { counts.withLock { $0.dropped } }

    /// Ends the thread and closes the sockets. Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        done.wait()
        close(front)
        close(back)
    }

    private func relay() {
        var client: sockaddr_in?
        var server = sockaddr_in()
        server.sin_family = sa_family_t(AF_INET)
        server.sin_port = target.bigEndian
        server.sin_addr.s_addr = inet_addr("127.0.0.1")
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var fds = [pollfd(fd: front, events: Int16(POLLIN), revents: 0), pollfd(fd: back, events: Int16(POLLIN), revents: 0)]
        while !stopped.withLock({ $0 }) {
            guard poll(&fds, 2, 50) > 0 else { continue }
            for index in 0..<2 where fds[index].revents & Int16(POLLIN) != 0 {
                var from = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let count = withUnsafeMutablePointer(to: &from) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fds[index].fd, &buffer, buffer.count, 0, $0, &length) }
                }
                guard count > 0 else { continue }
                if blocked.withLock({ $0 }) {
                    counts.withLock { $0.dropped += 1 }
                    continue
                }
                if index == 0 { client = from }
                guard var destination = index == 0 ? server : client else { continue }
                let out = index == 0 ? back : front
                _ = withUnsafePointer(to: &destination) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(out, buffer, count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                counts.withLock { $0.forwarded += 1 }
            }
        }
    }
}
