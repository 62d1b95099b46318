/// The value types of the SDP attributes WebRTC uses. Each parses from the text after `a=<name>:` and
/// prints back to the same text (``sdpValue``), so a description parsed and printed is unchanged.

/// `a=rtpmap:<payload type> <encoding name>/<clock rate>[/<channels>]` (RFC 8866 §6.6).
public struct RTPMap: Sendable, Equatable {
    public var payloadType: UInt8
    /// As written (`VP8`, `rtx`, `opus`); compare case-insensitively.
    public var encodingName: String
    /// Hz (90000 for video).
    public var clockRate: UInt32
    /// Audio channels, when given.
    public var channels: UInt8?

    public init(payloadType: UInt8, encodingName: String, clockRate: UInt32, channels: UInt8? = nil) {
        self.payloadType = payloadType
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    init(value: String, line: Int) throws(SDPError) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 2, let payloadType = UInt8(fields[0]), payloadType <= 127 else {
            throw .badAttribute(line: line, name: "rtpmap", reason: "expected '<payload type 0-127> <encoding>'")
        }
        let parts = fields[1].split(separator: "/", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), !parts[0].isEmpty, let clockRate = UInt32(parts[1]), clockRate > 0 else {
            throw .badAttribute(line: line, name: "rtpmap", reason: "expected '<name>/<clock rate>[/<channels>]'")
        }
        var channels: UInt8?
        if parts.count == 3 {
            guard let count = UInt8(parts[2]) else {
                throw .badAttribute(line: line, name: "rtpmap", reason: "bad channel count")
            }
            channels = count
        }
        self.init(payloadType: payloadType, encodingName: String(parts[0]), clockRate: clockRate, channels: channels)
    }

    public var sdpValue: String {
        "\(payloadType) \(encodingName)/\(clockRate)" + (channels.map { "/\($0)" } ?? "")
    }

    /// True when both name the same encoding (case-insensitively), clock rate and channels.
    public func sameEncoding(as other: RTPMap) -> Bool {
        encodingName.lowercased() == other.encodingName.lowercased() && clockRate == other.clockRate && channels == other.channels
    }
}

/// `a=fmtp:<format> <format specific parameters>` (RFC 8866 §6.15). The parameters are kept as written;
/// ``parameters`` splits the common `key=value;key=value` form.
public struct FormatParameters: Sendable, Equatable {
    /// The format (a payload type for RTP media).
    public var format: String
    public var text: String

    public init(format: String, text: String) {
        self.format = format
        self.text = text
    }

    init(value: String, line: Int) throws(SDPError) {
        guard let space = value.firstIndex(of: " "), space != value.startIndex else {
            throw .badAttribute(line: line, name: "fmtp", reason: "expected '<format> <parameters>'")
        }
        self.init(format: String(value[..<space]), text: String(value[value.index(after: space)...]))
    }

    /// `key=value` pairs split on `;` (keys lowercased, surrounding spaces trimmed); a part without `=`
    /// has an empty value.
    public var parameters: [(key: String, value: String)] {
        text.split(separator: ";").map { part in
            let trimmed = part.trimmingSpaces
            if let equals = trimmed.firstIndex(of: "=") {
                return (String(trimmed[..<equals]).lowercased(), String(trimmed[trimmed.index(after: equals)...]))
            }
            return (trimmed.lowercased(), "")
        }
    }

    /// The value of `key` (case-insensitive), if present.
    public func parameter(_ key: String) -> String? {
        parameters.first { $0.key == key.lowercased() }?.value
    }

    public var sdpValue: String { "\(format) \(text)" }
}

/// `a=rtcp-fb:<payload type | *> <type> [<parameter>]` (RFC 4585 §4.2), e.g. `96 nack pli`.
public struct RTCPFeedbackAttribute: Sendable, Equatable {
    /// The payload type, or nil for `*` (all formats of the m-line).
    public var payloadType: UInt8?
    /// `nack`, `ccm`, `goog-remb`, `transport-cc`, …
    public var type: String
    /// `pli`, `fir`, …; nil when absent. May hold spaces (the rest of the line).
    public var parameter: String?

    public init(payloadType: UInt8?, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    init(value: String, line: Int) throws(SDPError) {
        let fields = value.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count >= 2, !fields[1].isEmpty else {
            throw .badAttribute(line: line, name: "rtcp-fb", reason: "expected '<payload type> <type> [<parameter>]'")
        }
        if fields[0] == "*" {
            payloadType = nil
        } else {
            guard let payloadType = UInt8(fields[0]), payloadType <= 127 else {
                throw .badAttribute(line: line, name: "rtcp-fb", reason: "bad payload type \(fields[0])")
            }
            self.payloadType = payloadType
        }
        type = String(fields[1])
        parameter = fields.count == 3 ? String(fields[2]) : nil
    }

    /// True when this is feedback `type` [`parameter`] for `payloadType` (directly or through `*`).
    public func matches(payloadType: UInt8, type: String, parameter: String?) -> Bool {
        (self.payloadType == nil || self.payloadType == payloadType) && self.type.lowercased() == type
            && self.parameter?.lowercased() == parameter
    }

    public var sdpValue: String {
        (payloadType.map(String.init) ?? "*") + " \(type)" + (parameter.map { " \($0)" } ?? "")
    }
}

/// `a=group:<semantics> <identification tag> …` (RFC 5888 §5), e.g. `BUNDLE 0 1 2` (RFC 8843).
public struct SDPGroup: Sendable, Equatable {
    public var semantics: String
    public var mids: [String]

    public init(semantics: String, mids: [String]) {
        self.semantics = semantics
        self.mids = mids
    }

    init(value: String, line: Int) throws(SDPError) {
        let fields = value.split(separator: " ")
        guard let first = fields.first else {
            throw .badAttribute(line: line, name: "group", reason: "no semantics")
        }
        self.init(semantics: String(first), mids: fields.dropFirst().map(String.init))
    }

    public var sdpValue: String { ([semantics] + mids).joined(separator: " ") }
}

/// `a=fingerprint:<hash function> <hex pairs separated by colons>` (RFC 8122 §5).
public struct Fingerprint: Sendable, Equatable {
    /// Lowercase hash name: `sha-256` (the one WebRTC requires support for), `sha-384`, `sha-512`, …
    public var algorithm: String
    /// Upper-case hex pairs joined by colons.
    public var value: String

    public init(algorithm: String, value: String) {
        self.algorithm = algorithm
        self.value = value
    }

    /// From the digest bytes: `AB:CD:…`.
    public init(algorithm: String, digest: [UInt8]) {
        let digits = Array("0123456789ABCDEF")
        self.init(algorithm: algorithm.lowercased(),
                  value: digest.map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }.joined(separator: ":"))
    }

    init(value text: String, line: Int) throws(SDPError) {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 2, !fields[0].isEmpty else {
            throw .badAttribute(line: line, name: "fingerprint", reason: "expected '<hash> <hex:hex:…>'")
        }
        self.init(algorithm: fields[0].lowercased(), value: String(fields[1]))
        guard let digest else {
            throw .badAttribute(line: line, name: "fingerprint", reason: "value is not colon-separated hex pairs")
        }
        if let expected = Self.digestLength(algorithm), digest.count != expected {
            throw .badAttribute(
                line: line, name: "fingerprint",
                reason: "a \(algorithm) digest is \(expected) bytes, this one \(digest.count) (RFC 8122 §5)")
        }
    }

    /// The digest length, bytes, of the hash functions we check (FIPS 180-4: sha-1 20, sha-224 28,
    /// sha-256 32, sha-384 48, sha-512 64); nil for others (RFC 8122 §5 names md2 and md5 too, which we
    /// neither check nor measure).
    public static func digestLength(_ algorithm: String) -> Int? {
        switch algorithm.lowercased() {
        case "sha-1": 20
        case "sha-224": 28
        case "sha-256": 32
        case "sha-384": 48
        case "sha-512": 64
        default: nil
        }
    }

    /// The digest bytes, or nil when ``value`` is not colon-separated hex pairs (either case).
    public var digest: [UInt8]? {
        var bytes: [UInt8] = []
        for pair in value.split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : bytes
    }

    public var sdpValue: String { "\(algorithm) \(value)" }
}

/// `a=setup` (RFC 4145 §4, RFC 8842 §5): which side starts the DTLS handshake.
public enum DTLSSetup: String, Sendable, Equatable, CaseIterable {
    /// Either; offers use this (RFC 8842 §5.2).
    case actpass
    /// This side initiates: it is the DTLS client.
    case active
    /// This side waits: it is the DTLS server.
    case passive
    case holdconn
}

/// Media direction attributes (RFC 8866 §6.7): `a=sendrecv` (the default), `sendonly`, `recvonly`,
/// `inactive`.
public enum MediaDirection: String, Sendable, Equatable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction an answerer that sends whenever the offerer can receive chooses (RFC 3264 §6.1, in
    /// spirit): `sendonly` when the offer receives (`recvonly`/`sendrecv`), otherwise `inactive`.
    public var answerForSender: MediaDirection {
        switch self {
        case .recvonly, .sendrecv: .sendonly
        case .sendonly, .inactive: .inactive
        }
    }
}

/// `a=ssrc:<ssrc> <attribute>[:<value>]` (RFC 5576 §4.1), e.g. `1234 cname:abc`, `1234 msid:s t`.
public struct SSRCAttribute: Sendable, Equatable {
    public var ssrc: UInt32
    public var name: String
    /// May hold spaces; nil when the attribute has no value.
    public var value: String?

    public init(ssrc: UInt32, name: String, value: String?) {
        self.ssrc = ssrc
        self.name = name
        self.value = value
    }

    init(value text: String, line: Int) throws(SDPError) {
        guard let space = text.firstIndex(of: " "), let ssrc = UInt32(text[..<space]) else {
            throw .badAttribute(line: line, name: "ssrc", reason: "expected '<ssrc 0-4294967295> <attribute>'")
        }
        let rest = text[text.index(after: space)...]
        guard !rest.isEmpty else { throw .badAttribute(line: line, name: "ssrc", reason: "no source attribute") }
        if let colon = rest.firstIndex(of: ":") {
            self.init(ssrc: ssrc, name: String(rest[..<colon]), value: String(rest[rest.index(after: colon)...]))
        } else {
            self.init(ssrc: ssrc, name: String(rest), value: nil)
        }
    }

    public var sdpValue: String { "\(ssrc) \(name)" + (value.map { ":\($0)" } ?? "") }
}

/// `a=ssrc-group:<semantics> <ssrc> …` (RFC 5576 §4.2), e.g. `FID 1234 5678` (RFC 4588 §8.3: media, RTX).
public struct SSRCGroup: Sendable, Equatable {
    public var semantics: String
    public var ssrcs: [UInt32]

    public init(semantics: String, ssrcs: [UInt32]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    init(value: String, line: Int) throws(SDPError) {
        let fields = value.split(separator: " ")
        guard fields.count >= 2 else { throw .badAttribute(line: line, name: "ssrc-group", reason: "expected '<semantics> <ssrc>…'") }
        var ssrcs: [UInt32] = []
        for field in fields.dropFirst() {
            guard let ssrc = UInt32(field) else { throw .badAttribute(line: line, name: "ssrc-group", reason: "bad SSRC \(field)") }
            ssrcs.append(ssrc)
        }
        self.init(semantics: String(fields[0]), ssrcs: ssrcs)
    }

    public var sdpValue: String { ([semantics] + ssrcs.map(String.init)).joined(separator: " ") }
}

/// `a=extmap:<id>[/<direction>] <URI> [<extension attributes>]` (RFC 8285 §8).
public struct ExtensionMap: Sendable, Equatable {
    /// 1…14 (one-byte form) or 1…255 (two-byte form, RFC 8285 §5).
    public var id: UInt8
    public var direction: MediaDirection?
    public var uri: String
    public var attributes: String?

    public init(id: UInt8, direction: MediaDirection? = nil, uri: String, attributes: String? = nil) {
        self.id = id
        self.direction = direction
        self.uri = uri
        self.attributes = attributes
    }

    init(value: String, line: Int) throws(SDPError) {
        let fields = value.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count >= 2, !fields[1].isEmpty else {
            throw .badAttribute(line: line, name: "extmap", reason: "expected '<id>[/<direction>] <uri>'")
        }
        let idParts = fields[0].split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(idParts.count), let id = UInt8(idParts[0]), id >= 1 else {
            throw .badAttribute(line: line, name: "extmap", reason: "bad id \(fields[0])")
        }
        var direction: MediaDirection?
        if idParts.count == 2 {
            guard let parsed = MediaDirection(rawValue: String(idParts[1])) else {
                throw .badAttribute(line: line, name: "extmap", reason: "bad direction \(idParts[1])")
            }
            direction = parsed
        }
        self.init(id: id, direction: direction, uri: String(fields[1]), attributes: fields.count == 3 ? String(fields[2]) : nil)
    }

    public var sdpValue: String {
        "\(id)" + (direction.map { "/\($0.rawValue)" } ?? "") + " \(uri)" + (attributes.map { " \($0)" } ?? "")
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var result = self
        while result.first == " " || result.first == "\t" { result = result.dropFirst() }
        while result.last == " " || result.last == "\t" { result = result.dropLast() }
        return result
    }
}
