import Foundation
import Glibc
import ScreencastSupport

/// The HTTP side of a WHEP viewer (RFC 9725): POST the offer, DELETE the session. HTTP/1.1 with
/// `Connection: close` over a blocking TCP socket to an IPv4 literal (the bench runs on 127.0.0.1 only).
struct WHEPClient {
    let host: String
    let port: UInt16
    let path: String

    /// Parses `http://HOST:PORT/PATH` with an IPv4 literal host.
    init(url: String) throws {
        guard url.hasPrefix("http://") else { throw BenchError("WHEP URL must be http://HOST:PORT/PATH, got \(url)") }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard let colon = authority.lastIndex(of: ":"), let port = UInt16(authority[authority.index(after: colon)...]) else {
            throw BenchError("WHEP URL needs a port: \(url)")
        }
        host = String(authority[..<colon])
        self.port = port
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// POSTs `offer`; returns the answer and the session's location (the `Location` header).
    func post(offer: String) throws -> (answer: String, location: String?) {
        let response = try request("POST", path: path, headers: ["Content-Type": "application/sdp"], body: offer)
        guard response.status == 201 else {
            // One line: the call's reason ends in a newline.
            let reason = response.body.prefix(200).trimmingCharacters(in: .whitespacesAndNewlines)
            throw BenchError("WHEP POST answered \(response.status): \(reason)")
        }
        return (response.body, response.headers["location"])
    }

    /// DELETEs the session at `location` (a path, or a URL on the same server); returns the status.
    @discardableResult
    func delete(location: String) throws -> Int {
        var target = location
        if let range = target.range(of: "://"), let slash = target[range.upperBound...].firstIndex(of: "/") {
            target = String(target[slash...])
        }
        return try request("DELETE", path: target, headers: [:], body: "").status
    }

    func request(_ method: String, path: String, headers: [String: String], body: String) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(SystemErrorText.of())") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw BenchError("not an IPv4 literal: \(host)") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchError("connect \(host):\(port): \(SystemErrorText.of())") }
        let payload = Array(body.utf8)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nContent-Length: \(payload.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let message = Array((head + "\r\n").utf8) + payload
        var sent = 0
        while sent < message.count {
            let count = message[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw BenchError("send: \(SystemErrorText.of())") }
            sent += count
        }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data += buffer[0..<count]
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw BenchError("\(method) \(path): no complete response") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2, let status = Int(statusLine.split(separator: " ")[1]) else {
            throw BenchError("\(method) \(path): bad status line")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: fields, body: String(text[split.upperBound...]))
    }
}
