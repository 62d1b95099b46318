/// An ICE candidate as written in SDP (RFC 8839 §5.1):
///
/// ```
/// candidate-attribute = "candidate" ":" foundation SP component-id SP
///                       transport SP priority SP connection-address SP port
///                       SP cand-type [SP rel-addr] [SP rel-port] *(SP cand-extension)
/// cand-type           = "typ" SP ("host" / "srflx" / "prflx" / "relay" / token)
/// rel-addr            = "raddr" SP connection-address
/// rel-port            = "rport" SP port
/// cand-extension      = extension-att-name SP extension-att-value
/// ```
/// e.g. `1467250027 1 udp 2122260223 3e0a….local 54321 typ host generation 0 network-id 1`. The address
/// may be an IP literal or a host name (browsers hide host addresses behind mDNS `.local` names). The
/// extensions (`tcptype`, `generation`, `ufrag`, `network-id`, `network-cost`, …) are kept in order.
public struct ICECandidate: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case host, serverReflexive, peerReflexive, relay
        case other(String)

        init(_ token: Substring) {
            switch token {
            case "host": self = .host
            case "srflx": self = .serverReflexive
            case "prflx": self = .peerReflexive
            case "relay": self = .relay
            default: self = .other(String(token))
            }
        }

        /// `host`, `srflx`, `prflx`, `relay`.
        public var token: String {
            switch self {
            case .host: "host"
            case .serverReflexive: "srflx"
            case .peerReflexive: "prflx"
            case .relay: "relay"
            case .other(let token): token
            }
        }
    }

    /// 1–32 ice-chars.
    public var foundation: String
    /// 1 for RTP (and, with rtcp-mux, everything).
    public var component: UInt16
    /// As written, usually `udp` or `UDP` (or `tcp`).
    public var transport: String
    public var priority: UInt32
    /// IP literal or host name (`….local` for mDNS).
    public var address: String
    public var port: UInt16
    public var kind: Kind
    public var relatedAddress: String?
    public var relatedPort: UInt16?
    /// Further name/value pairs, in order.
    public var extensions: [(name: String, value: String)]

    public init(
        foundation: String, component: UInt16 = 1, transport: String = "udp", priority: UInt32, address: String,
        port: UInt16, kind: Kind, relatedAddress: String? = nil, relatedPort: UInt16? = nil,
        extensions: [(name: String, value: String)] = []
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.kind = kind
        self.relatedAddress = relatedAddress
        self.relatedPort = relatedPort
        self.extensions = extensions
    }

    /// Parses a candidate, with or without the leading `candidate:` (and `a=`).
    public init(parsing text: String) throws(SDPError) {
        var value = Substring(text)
        if value.hasPrefix("a=") { value = value.dropFirst(2) }
        if value.hasPrefix("candidate:") { value = value.dropFirst("candidate:".count) }
        try self.init(value: String(value), line: 0)
    }

    init(value: String, line: Int) throws(SDPError) {
        func bad(_ reason: String) -> SDPError { .badAttribute(line: line, name: "candidate", reason: reason) }
        let fields = value.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 8, fields[6] == "typ" else { throw bad("expected '<foundation> <component> <transport> <priority> <address> <port> typ <type>'") }
        guard (1...32).contains(fields[0].count), fields[0].utf8.allSatisfy(\.isICEByte) else { throw bad("bad foundation") }
        guard let component = UInt16(fields[1]), component >= 1 else { throw bad("bad component \(fields[1])") }
        guard !fields[2].isEmpty, fields[2].utf8.allSatisfy(\.isTokenByte) else { throw bad("bad transport") }
        guard let priority = UInt32(fields[3]) else { throw bad("bad priority \(fields[3])") }
        guard !fields[4].isEmpty else { throw bad("empty address") }
        guard let port = UInt16(fields[5]) else { throw bad("bad port \(fields[5])") }
        guard !fields[7].isEmpty else { throw bad("empty type") }
        self.init(foundation: String(fields[0]), component: component, transport: String(fields[2]), priority: priority,
                  address: String(fields[4]), port: port, kind: Kind(fields[7]))
        var index = 8
        if index + 1 < fields.count, fields[index] == "raddr" {
            relatedAddress = String(fields[index + 1])
            index += 2
        }
        if index + 1 < fields.count, fields[index] == "rport" {
            guard let related = UInt16(fields[index + 1]) else { throw bad("bad rport \(fields[index + 1])") }
            relatedPort = related
            index += 2
        }
        guard (fields.count - index) % 2 == 0 else { throw bad("extension without a value") }
        while index < fields.count {
            guard !fields[index].isEmpty, !fields[index + 1].isEmpty else { throw bad("empty extension") }
            extensions.append((String(fields[index]), String(fields[index + 1])))
            index += 2
        }
    }

    /// True for a TCP candidate (RFC 6544 §4.5: transport `TCP`, any case).
    public var isTCP: Bool { transport.lowercased() == "tcp" }

    /// A TCP candidate's `tcptype` (RFC 6544 §4.5: `active`, `passive` or `so`), lowercased; nil when absent.
    public var tcpType: String? { extensions.first { $0.name == "tcptype" }?.value.lowercased() }

    /// True when the address is a host name rather than an IP literal (e.g. an mDNS `.local` name).
    public var hasHostName: Bool { !ICECandidate.isIPLiteral(address) }

    /// The value of the `a=candidate:` attribute (without `candidate:`).
    public var sdpValue: String {
        var text = "\(foundation) \(component) \(transport) \(priority) \(address) \(port) typ \(kind.token)"
        if let relatedAddress { text += " raddr \(relatedAddress)" }
        if let relatedPort { text += " rport \(relatedPort)" }
        for (name, value) in extensions { text += " \(name) \(value)" }
        return text
    }

    /// `candidate:<value>`, as in WHEP trickle fragments and `RTCIceCandidate.candidate`.
    public var description: String { "candidate:" + sdpValue }

    /// Field by field, as their ``sdpValue`` texts compare (the kind by its token), without building them:
    /// an offer's candidates are deduplicated through a `Set` (``RemoteTransport``), in time linear in their count.
    public static func == (a: ICECandidate, b: ICECandidate) -> Bool {
        a.foundation == b.foundation && a.component == b.component && a.transport == b.transport && a.priority == b.priority
            && a.address == b.address && a.port == b.port && a.kind.token == b.kind.token && a.relatedAddress == b.relatedAddress
            && a.relatedPort == b.relatedPort
            && a.extensions.elementsEqual(b.extensions) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The fields ``==`` compares, in its order (the kind by its token, every extension's name and value).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(foundation)
        hasher.combine(component)
        hasher.combine(transport)
        hasher.combine(priority)
        hasher.combine(address)
        hasher.combine(port)
        hasher.combine(kind.token)
        hasher.combine(relatedAddress)
        hasher.combine(relatedPort)
        hasher.combine(extensions.count)
        for (name, value) in extensions {
            hasher.combine(name)
            hasher.combine(value)
        }
    }

    /// True when every character is an ice-char (RFC 8839 §5.1): what `ice-ufrag`, `ice-pwd` and
    /// foundations are made of.
    public static func isICEChars(_ text: String) -> Bool { text.utf8.allSatisfy(\.isICEByte) }

    /// True for dotted IPv4, or an IPv6 literal (host names never hold a colon).
    public static func isIPLiteral(_ text: String) -> Bool {
        if text.contains(":") { return true }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.utf8.allSatisfy(\.isASCIIDigitByte) && Int(part)! <= 255
        }
    }
}

// The predicates read the character's one ASCII byte (a "\r\n" Character or a combining sequence is never
// one): a parser calls them for every character of every line, and a Character comparison or a search
// of a String literal walks grapheme clusters (in the fuzz profiles, a fifth of an SDP parse).
extension Character {
    /// ice-char = ALPHA / DIGIT / "+" / "/" (RFC 8839 §5.1).
    var isICEChar: Bool { utf8.count == 1 && utf8.first!.isICEByte }
    var isASCIIDigit: Bool { utf8.count == 1 && utf8.first!.isASCIIDigitByte }
    /// token-char of RFC 8866 §9 (visible ASCII except the separators it excludes).
    var isTokenChar: Bool { utf8.count == 1 && utf8.first!.isTokenByte }
}

extension UInt8 {
    /// ice-char (RFC 8839 §5.1) as a UTF-8 byte.
    var isICEByte: Bool {
        switch self {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2B, 0x2F: true
        default: false
        }
    }
    var isASCIIDigitByte: Bool { (0x30...0x39).contains(self) }
    /// token-char (RFC 8866 §9) as a UTF-8 byte: 0x21–0x7E but " ( ) , / : ; < = > ? @ [ \ ] { }.
    var isTokenByte: Bool {
        switch self {
        case 0x22, 0x28, 0x29, 0x2C, 0x2F, 0x3A...0x40, 0x5B...0x5D, 0x7B, 0x7D: false
        case 0x21...0x7E: true
        default: false
        }
    }
}
