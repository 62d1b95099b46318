import Glibc

/// Where the HTTP server listens: the value of `--http HOST:PORT` (default `127.0.0.1:8080`).
///
/// `HOST` is an IPv4 address, a bracketed IPv6 address (`[::1]:8080`) or a name resolved once at start
/// (`localhost`). The server binds exactly this one address, never a wildcard unless the text says
/// `0.0.0.0` or `[::]`. Port 0 asks the kernel for a free port (tests); ``HTTPServer/port`` tells which.
public struct HTTPEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// `127.0.0.1:8080`: loopback only, as the issue asks for the default.
    public static let `default` = HTTPEndpoint(host: "127.0.0.1", port: 8080)

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[IPV6]:PORT`.
    public init(parsing text: String) throws(SignalingError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .invalidEndpoint(text, reason: "unclosed '['") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .invalidEndpoint(text, reason: "expected ':PORT' after ']'") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .invalidEndpoint(text, reason: "expected HOST:PORT") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { throw .invalidEndpoint(text, reason: "put an IPv6 address in brackets: [ADDR]:PORT") }
        }
        guard !host.isEmpty else { throw .invalidEndpoint(text, reason: "empty host") }
        // A numeric host is an address, never a name to look up: one that is not a valid address is the
        // command line's fault (exit 64), not a resolver failure (`256.0.0.1` was "cannot resolve", exit 1).
        if host.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }) {
            var address = in_addr()
            guard inet_pton(AF_INET, String(host), &address) == 1 else {
                throw .invalidEndpoint(text, reason: "'\(host)' is not an IPv4 address (four parts of 0–255)")
            }
        } else if text.hasPrefix("[") {
            var address = in6_addr()  // a zone (`%eth0`) after the address is getaddrinfo's to read
            guard inet_pton(AF_INET6, String(host.prefix { $0 != "%" }), &address) == 1 else {
                throw .invalidEndpoint(text, reason: "'\(host)' is not an IPv6 address")
            }
        }
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
              let port = UInt16(portText)
        else { throw .invalidEndpoint(text, reason: "port must be 0-65535") }
        self.init(host: String(host), port: port)
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// True when the host is an IPv4 loopback address (127.0.0.0/8), `::1` or `localhost`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Resolves the host (numeric first; names through getaddrinfo, IPv4 preferred) to one socket address.
    func resolve() throws(SignalingError) -> SocketAddress {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw .addressResolution(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var candidates: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr, entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
                candidates.append(SocketAddress(address, length: entry.pointee.ai_addrlen))
            }
            cursor = entry.pointee.ai_next
        }
        guard let chosen = candidates.first(where: { !$0.isIPv6 }) ?? candidates.first else {
            throw .addressResolution(host: host, reason: "no IPv4 or IPv6 address")
        }
        return chosen
    }
}

/// A resolved `sockaddr_in`/`sockaddr_in6`, kept as bytes so it is a plain value.
struct SocketAddress: Sendable {
    private var storage: [UInt8]
    let isIPv6: Bool

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        storage = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
        isIPv6 = Int32(address.pointee.sa_family) == AF_INET6
    }

    /// The address's length in bytes, for bind(2).
    var length: socklen_t { socklen_t(storage.count) }

    /// Calls `body` with a `sockaddr` pointer valid for the call only.
    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        storage.withUnsafeBytes { raw in body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }
}
