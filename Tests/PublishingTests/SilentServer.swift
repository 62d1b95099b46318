import Glibc
import XCTest

/// A TCP port on 127.0.0.1 that takes connections and never answers: a listening socket nobody accepts
/// from (the kernel completes each handshake), standing for an SFU that hangs. Closed in `deinit`: keep it
/// alive while it is needed (`defer { withExtendedLifetime(server) {} }`).
final class SilentServer {
    let fd: Int32
    /// The port it listens on (chosen by the kernel).
    let port: UInt16

    init(file: StaticString = #filePath, line: UInt = #line) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw SilentServerError(errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        XCTAssertTrue(listening, "bind/listen on 127.0.0.1:0: errno \(errno)", file: file, line: line)
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }
}

/// `socket(2)` failed (its errno).
struct SilentServerError: Error { let errno: Int32 }
