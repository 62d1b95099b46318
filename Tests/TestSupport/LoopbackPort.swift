import Foundation
import Glibc

/// Ports on 127.0.0.1 that were free a moment ago (bound to port 0, read back, closed): for a process under
/// test that must listen on a port the test knows beforehand.
public enum LoopbackPort {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A free TCP port (`SOCK_STREAM`) on 127.0.0.1.
    /// - Throws: ``Failure`` when `socket` or `bind`/`getsockname` fail (with errno).
    public static func tcp() throws -> UInt16 { try free(Int32(SOCK_STREAM.rawValue)) }

    /// A free UDP port (`SOCK_DGRAM`) on 127.0.0.1.
    /// - Throws: ``Failure`` as ``tcp()``.
    public static func udp() throws -> UInt16 { try free(Int32(SOCK_DGRAM.rawValue)) }

    private static func free(_ type: Int32) throws -> UInt16 {
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        return try bind(fd, port: 0)
    }

    /// A TCP socket listening on 127.0.0.1, held until this object is released: a port some other process
    /// already uses. `nil` when `port` is already taken by someone else (which serves the same purpose).
    public final class Listener {
        /// The port listened on.
        public let port: UInt16
        private let fd: Int32

        /// Listens on 127.0.0.1:`port` (0: any free port).
        /// - Throws: ``Failure`` when the socket cannot be made or `port` cannot be bound or listened on.
        public init(port: UInt16 = 0) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
            do {
                self.port = try LoopbackPort.bind(fd, port: port)
                guard listen(fd, 1) == 0 else { throw Failure(description: "listen: errno \(errno)") }
            } catch {
                close(fd)
                throw error
            }
        }

        deinit { close(fd) }
    }

    /// Binds a UDP socket to 127.0.0.1:`port` (0: any free port); returns the port.
    static func bindUDP(_ fd: Int32, port: UInt16) throws -> UInt16 { try bind(fd, port: port) }

    private static func bind(_ fd: Int32, port: UInt16) throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                Glibc.bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind 127.0.0.1:\(port): errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
