import Glibc

/// Reads session descriptions (RFC 8866 §5, §9 grammar) strictly enough to refuse what is not SDP and
/// leniently where real peers differ: lines may end CRLF or LF (§5 allows LF), blank lines are skipped,
/// and attributes it does not know are kept as written.
///
/// Checked: `v=0` first; exactly one `o=` (six fields, numeric session id and version) and `s=` before the
/// first `m=`; at least one `t=`; line types in their section (`i c b k a` in media); well-formed `m=`
/// (port 0–65535, profile, at least one format; payload types 0–127 for RTP profiles), `c=` and known
/// attributes; a `c=` for every media section with a non-zero port when the session has none (§5.7).
public struct SDPParser: Sendable {
    /// Largest description accepted, in bytes (default 128 KiB; browser offers are under 16 KiB).
    public var maxBytes: Int

    public init(maxBytes: Int = 128 * 1024) { self.maxBytes = maxBytes }

    /// Parses a description received as bytes (an HTTP body).
    public func parse(_ bytes: [UInt8]) throws(SDPError) -> SessionDescription {
        guard bytes.count <= maxBytes else { throw .tooLarge(bytes: bytes.count, limit: maxBytes) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        return try parse(text)
    }

    /// Parses a description given as text.
    public func parse(_ text: String) throws(SDPError) -> SessionDescription {
        guard text.utf8.count <= maxBytes else { throw .tooLarge(bytes: text.utf8.count, limit: maxBytes) }
        let utf8 = Array(text.utf8)
        var state = State()
        // Split on bytes: in Swift "\r\n" is one Character, so a Character split would miss it. The scans
        // are memchr: a byte loop costs a comparison per byte, which dominated parsing under the fuzzer's
        // instrumentation.
        try utf8.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(SDPError) in
            guard let base = all.baseAddress else { return }
            guard memchr(base, 0, all.count) == nil else { throw .notText }
            var number = 0
            var start = 0
            while start <= all.count {
                let left = all.count - start
                let newline = left == 0 ? nil : memchr(base + start, 0x0A, left)
                let end = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? all.count
                number += 1
                var bytes = UnsafeBufferPointer(rebasing: all[start..<end])
                start = end + 1
                if bytes.last == 0x0D { bytes = UnsafeBufferPointer(rebasing: bytes.dropLast()) }
                if bytes.isEmpty { continue }
                let line = Substring(String(decoding: bytes, as: UTF8.self))
                guard memchr(bytes.baseAddress!, 0x0D, bytes.count) == nil else {
                    throw .badLine(line: number, text: String(line), reason: "bare CR")
                }
                try state.consume(line, number: number)
            }
        }
        return try state.finish()
    }

    private struct State {
        var version: Int?
        var origin: SessionDescription.Origin?
        var sessionName: String?
        var session = SessionDescription(origin: .init(sessionID: "0", sessionVersion: "0"))
        var sawTiming = false
        var media: [MediaDescription] = []

        mutating func consume(_ line: Substring, number: Int) throws(SDPError) {
            let bytes = line.utf8
            guard bytes.count >= 2, let type = line.first, type.isASCII, type.isLowercase,
                  line[line.index(after: line.startIndex)] == "="
            else {
                throw .badLine(line: number, text: String(line), reason: "not <type>=<value>")
            }
            let value = line.dropFirst(2)
            guard version != nil || type == "v" else {
                if "osiuepcbtrzkam".contains(type) { throw .missingLine("v=", section: "session") }
                throw .badLine(line: number, text: String(line), reason: "unknown line type")
            }
            if !media.isEmpty {
                try consumeMedia(type, value, line, number)
                return
            }
            switch type {
            case "v":
                guard version == nil else { throw .unexpectedLine(line: number, text: String(line)) }
                guard value == "0" else { throw .badLine(line: number, text: String(line), reason: "version is not 0") }
                version = 0
            case "o":
                guard origin == nil else { throw .unexpectedLine(line: number, text: String(line)) }
                let fields = value.split(separator: " ")
                guard fields.count == 6, fields[1].utf8.allSatisfy(\.isASCIIDigitByte), fields[2].utf8.allSatisfy(\.isASCIIDigitByte) else {
                    throw .badLine(line: number, text: String(line), reason: "expected o=<user> <id> <version> IN <IP4|IP6> <address>")
                }
                origin = .init(username: String(fields[0]), sessionID: String(fields[1]), sessionVersion: String(fields[2]),
                               networkType: String(fields[3]), addressType: String(fields[4]), address: String(fields[5]))
            case "s":
                guard sessionName == nil else { throw .unexpectedLine(line: number, text: String(line)) }
                sessionName = String(value)
            case "i", "u", "e", "p":
                session.informationLines.append(.init(type: type, value: String(value)))
            case "c":
                guard session.connection == nil else { throw .unexpectedLine(line: number, text: String(line)) }
                session.connection = try Self.connection(value, line, number)
            case "b":
                session.bandwidths.append(String(value))
            case "t":
                let fields = value.split(separator: " ")
                guard fields.count == 2, fields.allSatisfy({ $0.utf8.allSatisfy(\.isASCIIDigitByte) }) else {
                    throw .badLine(line: number, text: String(line), reason: "expected t=<start> <stop>")
                }
                if !sawTiming { session.timing = [] }
                sawTiming = true
                session.timing.append(String(value))
            case "r", "z", "k":
                session.timingLines.append(.init(type: type, value: String(value)))
            case "a":
                let attribute = try SDPAttribute(line: value, number: number)
                try Self.checkUnique(attribute, against: session.attributes, number: number)
                session.attributes.append(attribute)
            case "m":
                guard origin != nil else { throw .missingLine("o=", section: "session") }
                guard sessionName != nil else { throw .missingLine("s=", section: "session") }
                guard sawTiming else { throw .missingLine("t=", section: "session") }
                media.append(try Self.mediaLine(value, line, number))
            default:
                throw .badLine(line: number, text: String(line), reason: "unknown line type")
            }
        }

        mutating func consumeMedia(_ type: Character, _ value: Substring, _ line: Substring, _ number: Int) throws(SDPError) {
            let index = media.count - 1
            switch type {
            case "m": media.append(try Self.mediaLine(value, line, number))
            case "i", "k": media[index].otherLines.append(.init(type: type, value: String(value)))
            case "c":
                guard media[index].connection == nil else { throw .unexpectedLine(line: number, text: String(line)) }
                media[index].connection = try Self.connection(value, line, number)
            case "b": media[index].bandwidths.append(String(value))
            case "a":
                let attribute = try SDPAttribute(line: value, number: number)
                try Self.checkUnique(attribute, against: media[index].attributes, number: number)
                media[index].attributes.append(attribute)
            case "v", "o", "s", "u", "e", "p", "t", "r", "z":
                throw .unexpectedLine(line: number, text: String(line))
            default:
                throw .badLine(line: number, text: String(line), reason: "unknown line type")
            }
        }

        func finish() throws(SDPError) -> SessionDescription {
            guard version != nil else { throw .missingLine("v=", section: "session") }
            guard let origin else { throw .missingLine("o=", section: "session") }
            guard let sessionName else { throw .missingLine("s=", section: "session") }
            guard sawTiming else { throw .missingLine("t=", section: "session") }
            var description = session
            description.origin = origin
            description.sessionName = sessionName
            description.media = media
            if description.connection == nil {
                for (index, section) in media.enumerated() where section.connection == nil && section.port != 0 {
                    throw .missingLine("c=", section: "m-line \(index)")
                }
            }
            return description
        }

        /// Refuses an attribute that gives a second meaning to a number its section already defined:
        /// - `a=rtpmap` for a payload type already mapped to another encoding (RFC 8866 §6.6: the map binds
        ///   one payload type to one encoding; `96 VP8/90000` and `96 rtx/90000` together are malformed);
        /// - `a=extmap` with an ID already mapped to another URI (RFC 8285 §6: "each local identifier
        ///   potentially used in the stream is mapped to an extension").
        /// A repeat of the same mapping is harmless and kept.
        static func checkUnique(_ attribute: SDPAttribute, against earlier: [SDPAttribute], number: Int) throws(SDPError) {
            switch attribute {
            case .rtpmap(let map):
                for case .rtpmap(let other) in earlier where other.payloadType == map.payloadType && !other.sameEncoding(as: map) {
                    throw .badAttribute(
                        line: number, name: "rtpmap",
                        reason: "payload type \(map.payloadType) is already mapped to \(other.encodingName)/\(other.clockRate) "
                            + "(RFC 8866 §6.6: one encoding per payload type)")
                }
            case .extmap(let map):
                for case .extmap(let other) in earlier where other.id == map.id && other.uri != map.uri {
                    throw .badAttribute(
                        line: number, name: "extmap",
                        reason: "id \(map.id) is already mapped to \(other.uri) (RFC 8285 §6: one extension per id)")
                }
            default: break
            }
        }

        static func connection(_ value: Substring, _ line: Substring, _ number: Int) throws(SDPError) -> SessionDescription.Connection {
            let fields = value.split(separator: " ")
            guard fields.count == 3, fields[0] == "IN", fields[1] == "IP4" || fields[1] == "IP6" else {
                throw .badLine(line: number, text: String(line), reason: "expected c=IN <IP4|IP6> <address>")
            }
            return .init(networkType: "IN", addressType: String(fields[1]), address: String(fields[2]))
        }

        static func mediaLine(_ value: Substring, _ line: Substring, _ number: Int) throws(SDPError) -> MediaDescription {
            func bad(_ reason: String) -> SDPError { .badLine(line: number, text: String(line), reason: reason) }
            let fields = value.split(separator: " ")
            guard fields.count >= 4 else { throw bad("expected m=<media> <port> <proto> <format> …") }
            guard fields[0].utf8.allSatisfy(\.isTokenByte) else { throw bad("media type is not a token") }
            let portParts = fields[1].split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(portParts.count), portParts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(\.isASCIIDigitByte) }),
                  let port = UInt16(portParts[0])
            else { throw bad("bad port \(fields[1])") }
            var section = MediaDescription(kind: String(fields[0]), port: port, proto: String(fields[2]),
                                           formats: fields[3...].map(String.init))
            if portParts.count == 2 {
                guard let count = UInt16(portParts[1]) else { throw bad("bad port count \(fields[1])") }
                section.portCount = count
            }
            guard section.proto.utf8.allSatisfy({ $0.isTokenByte || $0 == 0x2F }) else { throw bad("bad profile") }
            if section.isRTP {
                for format in section.formats {
                    guard let payloadType = UInt8(format), payloadType <= 127 else { throw bad("bad payload type \(format)") }
                }
            }
            return section
        }
    }
}

extension SessionDescription {
    /// Parses `text` with the default ``SDPParser``.
    public init(parsing text: String) throws(SDPError) { self = try SDPParser().parse(text) }
}
