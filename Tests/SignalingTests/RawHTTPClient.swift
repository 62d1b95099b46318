import Foundation
import Glibc

/// A response as read off the wire.
struct RawResponse {
    var status: Int
    /// Field names lower-cased, in order.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }
    func headers(_ name: String) -> [String] { headers.filter { $0.name == name.lowercased() }.map(\.value) }
    var text: String { String(decoding: body, as: UTF8.self) }
}

enum RawHTTPError: Error, CustomStringConvertible {
    case socket(String)
    case malformed(String)
    var description: String {
        switch self {
        case .socket(let text): "socket: \(text)"
        case .malformed(let text): "malformed response: \(text)"
        }
    }
}

/// A minimal HTTP/1.1 client over a blocking TCP socket to 127.0.0.1, so tests control every byte
/// (methods, headers, chunked or lying bodies) and see exactly what the server sent.
enum RawHTTPClient {
    /// Opens a connection to 127.0.0.1:`port` with send/receive timeouts.
    /// - Parameter source: the local address to connect from (another of 127.0.0.0/8 stands for another client).
    static func connect(port: UInt16, timeout: Double = 5, source: String? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.socket("socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let code = errno
                close(fd)
                throw RawHTTPError.socket("bind \(source): errno \(code)")
            }
        }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw RawHTTPError.socket("connect: errno \(code)")
        }
        return fd
    }

    /// Sends all of `bytes` (MSG_NOSIGNAL: a peer that closed early gives an error, not SIGPIPE).
    /// Returns false when the peer stopped accepting.
    @discardableResult
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Reads until the server closes the connection (or the timeout), then parses one response.
    static func readResponse(_ fd: Int32) throws -> RawResponse { try parse(readAll(fd)) }

    /// Every byte until the server closes the connection (or the timeout).
    static func readAll(_ fd: Int32) throws -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { data += buffer[0..<count]; continue }
            if count == 0 || errno == ECONNRESET { break }
            if errno == EINTR { continue }
            if data.isEmpty { throw RawHTTPError.socket("recv: errno \(errno)") }
            break
        }
        return data
    }

    /// One request on a fresh `Connection: close` connection. `body` is sent with `Content-Length`
    /// unless `headers` already say how it is framed.
    static func request(
        port: UInt16, method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = [], timeout: Double = 5,
        source: String? = nil
    ) throws -> RawResponse {
        let fd = try connect(port: port, timeout: timeout, source: source)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        let framed = headers.contains { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !framed && (!body.isEmpty || ["POST", "PATCH", "PUT"].contains(method)) { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        sendAll(fd, Array(head.utf8) + body)
        return try readResponse(fd)
    }

    static func parse(_ data: [UInt8]) throws -> RawResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, data.count - 3)).first(where: { Array(data[$0..<$0 + 4]) == separator }) else {
            throw RawHTTPError.malformed("no header end in \(data.count) bytes: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: data[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw RawHTTPError.malformed("status line \(lines[0])")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPError.malformed("header line \(line)") }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(data[(end + 4)...])
        if let length = headers.first(where: { $0.name == "content-length" }).flatMap({ Int($0.value) }), body.count > length {
            body = Array(body.prefix(length))
        }
        return RawResponse(status: status, headers: headers, body: body)
    }
}
