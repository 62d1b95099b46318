import Glibc
import SDP

extension ICEAgent {
    /// Which side of the ICE exchange we are (RFC 8445 §6.1.1): the offerer controls and nominates, the
    /// answerer (a WHEP server answering a browser's offer) is controlled.
    public enum Role: String, Sendable, Equatable {
        case controlling, controlled
    }

    /// How one ``ICEAgent`` gathers and keeps its connection. One stream with one component: BUNDLE and
    /// rtcp-mux put RTP, RTCP, DTLS and STUN on one 5-tuple (RFC 8843, RFC 5761, RFC 7983).
    public struct Configuration: Sendable, Equatable {
        public var role: Role
        /// IP literals to gather host candidates on (`--ice-address`, repeatable). Empty: libnice finds the
        /// machine's addresses itself, but it skips loopback, so tests give `127.0.0.1` here.
        public var localAddresses: [String]
        /// Adds a server-reflexive candidate (RFC 8489 Binding) when set (`--stun HOST:PORT`).
        public var stunServer: ICEServerAddress?
        /// Adds relayed candidates (RFC 8656 Allocate), one per server (`--turn URL`).
        public var turnServers: [TURNServer]
        /// Gather relayed candidates only (`RTCIceTransportPolicy` "relay"; libnice's `force-relay`): the
        /// peer then never learns a local address. Needs ``turnServers``.
        public var relayOnly: Bool
        /// Local ports for host candidates, UDP and passive TCP alike (all of them when nil): libnice picks a
        /// random port of the range for each and walks on from it to the first free one (`--ice-ports`). An
        /// active TCP candidate binds no port until it connects (RFC 6544 §4.5: advertised as port 9).
        public var portRange: ClosedRange<UInt16>?
        /// ICE-TCP (RFC 6544, framing RFC 4571; `--ice-tcp on|off`): besides each UDP host candidate, a passive
        /// TCP one (a listening socket a peer that cannot use UDP connects to) and an active one (we connect to
        /// a peer's passive candidate), and TCP remote candidates are checked. TCP candidates rank below every
        /// UDP one but relayed ones (libnice halves the type preference of TCP for datagram traffic:
        /// host 60 against UDP's host 120, server-reflexive 100, peer-reflexive 110; RFC 6544 §4.2), so a
        /// UDP pair wins whenever one works. Datagrams go as RFC 4571 frames (a 16-bit length before each) and
        /// arrive whole, one ``ICEAgent/send(_:)`` per frame; one the socket cannot take now is dropped, not
        /// queued, as on UDP.
        public var iceTCP: Bool
        /// How long ``ICEAgent/gatherCandidates()`` waits for gathering to finish before it returns what it
        /// has (server-reflexive and relayed candidates that come later are trickled as events).
        public var gatheringTimeLimit: Duration
        /// A peer that has not connected this long after ``ICEAgent/setRemoteCredentials(_:)`` is given up
        /// (``ICEAgent/Event/expired(_:)`` with ``ICEAgent/Expiry/neverConnected``).
        public var connectTimeLimit: Duration
        /// How long the agent may stay FAILED before it is given up. libnice's FAILED is not final (a late
        /// peer-reflexive check can bring a component back to READY), so a FAILED state only expires the
        /// peer when it lasts this long.
        public var failedGracePeriod: Duration
        /// libnice's own RFC 7675 consent freshness (off by default: the peer connection keeps consent itself,
        /// `ConsentFreshness`, from the peer's authenticated SRTCP and DTLS). When on, a peer that stops
        /// answering libnice's consent checks (every 4–6 s) is failed 10 s after its last answer (Debian 12's
        /// libnice 0.1.21; RFC 7675 says 30 s), then expired after ``failedGracePeriod``, and the pair never
        /// becomes READY again. Two checks tail-dropped behind our own media on a congested link, or a stop
        /// of this process over 4 s (libnice counts time it did not run), lapse it. When off, libnice sends
        /// STUN binding indications every 25 s as keepalives (RFC 8445 §11) and never fails a working pair.
        public var consentFreshness: Bool
        /// Datagrams kept while the agent is not READY yet (further ones are dropped).
        public var sendQueueLimit: Int
        /// The peer this agent serves (the WHEP session id), named as `peer=` in its log lines; nil when it has none.
        public var peerID: String? = nil
        /// Which remote candidates are checked (`--remote-candidates`); nil: ``RemoteCandidatePolicy/automatic(localAddresses:)``.
        public var remoteCandidatePolicy: RemoteCandidatePolicy?
        /// Remote candidates one agent takes, from the offer and trickle together; further ones are refused
        /// (each costs checks: a peer cannot make the call probe hundreds of addresses).
        public var remoteCandidateLimit: Int
        /// The pacing of our connectivity checks, ms between two checks of the agent (RFC 8445 §14.2's Ta;
        /// libnice's `stun-pacing-timer`): at most 1000 / this new checks a second per peer.
        public var checkPacingMilliseconds: UInt32
        /// Candidate pairs one agent checks at most (libnice's `max-connectivity-checks`).
        public var checkLimit: UInt32

        /// The policy in force: the one given, else the automatic one for ``localAddresses``.
        public var effectiveRemoteCandidatePolicy: RemoteCandidatePolicy {
            remoteCandidatePolicy ?? .automatic(localAddresses: localAddresses)
        }

        public init(
            role: Role, localAddresses: [String] = [], stunServer: ICEServerAddress? = nil,
            turnServers: [TURNServer] = [], relayOnly: Bool = false, portRange: ClosedRange<UInt16>? = nil,
            iceTCP: Bool = true, gatheringTimeLimit: Duration = .seconds(3), connectTimeLimit: Duration = .seconds(30),
            failedGracePeriod: Duration = .seconds(5), consentFreshness: Bool = false, sendQueueLimit: Int = 256,
            remoteCandidatePolicy: RemoteCandidatePolicy? = nil, remoteCandidateLimit: Int = 32,
            checkPacingMilliseconds: UInt32 = 50, checkLimit: UInt32 = 64
        ) {
            self.role = role
            self.localAddresses = localAddresses
            self.stunServer = stunServer
            self.turnServers = turnServers
            self.relayOnly = relayOnly
            self.portRange = portRange
            self.iceTCP = iceTCP
            self.gatheringTimeLimit = gatheringTimeLimit
            self.connectTimeLimit = connectTimeLimit
            self.failedGracePeriod = failedGracePeriod
            self.consentFreshness = consentFreshness
            self.sendQueueLimit = sendQueueLimit
            self.remoteCandidatePolicy = remoteCandidatePolicy
            self.remoteCandidateLimit = remoteCandidateLimit
            self.checkPacingMilliseconds = checkPacingMilliseconds
            self.checkLimit = checkLimit
        }
    }
}

/// A STUN or TURN server's host and port, as `--stun HOST:PORT` takes it (`[v6]:port` for IPv6).
public struct ICEServerAddress: Sendable, Equatable, CustomStringConvertible {
    /// An IP literal or a host name (resolved when the agent is created: libnice takes IP literals only).
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT` (a bare IPv6 literal takes `defaultPort`).
    public init(parsing text: String, defaultPort: UInt16 = 3478) throws(ICEError) {
        func bad(_ reason: String) -> ICEError { .invalidConfiguration("bad server address '\(text)': \(reason)") }
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw bad("no ']'") }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw bad("junk after ']'") }
                portText = rest.dropFirst()
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "?" || $0 == "@" }) else {
            throw bad("bad host")
        }
        var port = defaultPort
        if let portText {
            guard let value = UInt16(portText), value > 0 else { throw bad("bad port") }
            port = value
        }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 literal.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The host as an IP literal: itself when it is one, else the first address `getaddrinfo` gives
    /// (IPv4 preferred). Blocks while the resolver works.
    func resolvedAddress() throws(ICEError) -> String {
        if ICECandidate.isIPLiteral(host) { return host }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw .invalidConfiguration("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var found: [String] = []
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let entry = node {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if let address = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                        var raw = sin.pointee.sin_addr
                        _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                    }
                    found.insert(Self.string(text), at: 0)
                } else if entry.pointee.ai_family == AF_INET6 {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                        var raw = sin6.pointee.sin6_addr
                        _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    }
                    found.append(Self.string(text))
                }
            }
            node = entry.pointee.ai_next
        }
        guard let first = found.first else { throw .invalidConfiguration("\(host) has no IP address") }
        return first
    }

    private static func string(_ nulTerminated: [CChar]) -> String {
        String(decoding: nulTerminated.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A TURN server (RFC 8656) and its long-term credentials, from a `turn:`/`turns:` URI (RFC 7065 §3.1):
///
/// ```
/// turnURI   = scheme ":" host [ ":" port ] [ "?transport=" transport ]
/// scheme    = "turn" / "turns"          ; turns: TLS over TCP, default port 5349 (3478 otherwise)
/// transport = "udp" / "tcp"
/// ```
public struct TURNServer: Sendable, Equatable, CustomStringConvertible {
    /// How we reach the server (the relayed candidate itself is always UDP).
    public enum Transport: String, Sendable, Equatable {
        case udp, tcp, tls
    }

    public var address: ICEServerAddress
    public var transport: Transport
    public var username: String
    public var credential: String

    public init(address: ICEServerAddress, transport: Transport = .udp, username: String, credential: String) {
        self.address = address
        self.transport = transport
        self.username = username
        self.credential = credential
    }

    /// Parses `turn:host:port?transport=udp` (and `turns:`), as `--turn URL` takes it.
    public init(url: String, username: String, credential: String) throws(ICEError) {
        func bad(_ reason: String) -> ICEError { .invalidConfiguration("bad TURN URL '\(url)': \(reason)") }
        let secure: Bool
        var rest: Substring
        if url.lowercased().hasPrefix("turns:") {
            secure = true
            rest = url.dropFirst(6)
        } else if url.lowercased().hasPrefix("turn:") {
            secure = false
            rest = url.dropFirst(5)
        } else {
            throw bad("expected turn: or turns:")
        }
        var transport: Transport = secure ? .tls : .udp
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = rest[..<question]
            switch query.lowercased() {
            case "transport=udp" where !secure: transport = .udp
            case "transport=tcp": transport = secure ? .tls : .tcp
            default: throw bad("unsupported query '\(query)'")
            }
        }
        guard !rest.isEmpty else { throw bad("no host") }
        let address: ICEServerAddress
        do {
            address = try ICEServerAddress(parsing: String(rest), defaultPort: secure ? 5349 : 3478)
        } catch {
            throw bad("bad host or port")
        }
        self.init(address: address, transport: transport, username: username, credential: credential)
    }

    /// The URI (without the credentials).
    public var description: String {
        switch transport {
        case .udp: "turn:\(address)?transport=udp"
        case .tcp: "turn:\(address)?transport=tcp"
        case .tls: "turns:\(address)?transport=tcp"
        }
    }
}
