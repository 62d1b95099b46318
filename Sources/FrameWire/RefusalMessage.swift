/// What the call writes to a sender it does not take, just before it closes the connection
/// (Protocol/frame-wire.md §5): one HTTP-style message with a status line, `Content-Length` and a one-line
/// UTF-8 reason. The only bytes that ever travel from the call to the agent.
///
/// ```
/// HTTP/1.1 409 Conflict\r\n
/// Content-Type: text/plain; charset=utf-8\r\n
/// Content-Length: 48\r\n
/// \r\n
/// another agent is already sharing to this call\n
/// ```
///
/// Before it, a refused agent saw only `EPIPE` ("Broken pipe") and reconnected six times in six seconds without
/// saying why (issue 34).
public struct RefusalMessage: Sendable, Equatable {
    /// Why, in HTTP's words: 409 Conflict (another sender is sharing), 403 Forbidden (the sender runs as another
    /// user).
    public var status: Int
    /// One line for people, without the trailing newline.
    public var reason: String

    /// Longest message either side handles, bytes: a reader stops there (a longer one is not ours).
    public static let maximumBytes = 1024
    /// Longest reason kept, bytes (UTF-8); a longer one is cut.
    public static let maximumReasonBytes = 200

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    /// Another sender is sharing to this call (the call takes one at a time).
    public static func busy(currentPID: Int32) -> RefusalMessage {
        RefusalMessage(status: 409, reason: "another agent is already sharing to this call" + (currentPID > 0 ? " (pid \(currentPID))" : ""))
    }

    /// The sender runs as another user than the call (or its user is unknown).
    public static let foreignUser = RefusalMessage(status: 403, reason: "the call runs as another user and takes only its own user's agents")

    /// The status line's words for the statuses used here.
    static func phrase(_ status: Int) -> String {
        switch status {
        case 403: "Forbidden"
        case 409: "Conflict"
        default: "Refused"
        }
    }

    /// The message's bytes (the reason as ``cleaned(_:)`` makes it).
    public var bytes: [UInt8] {
        let body = Array(Self.cleaned(reason).utf8) + [0x0A]
        let head = "HTTP/1.1 \(status) \(Self.phrase(status))\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// `text` without control characters (Unicode category Cc: C0, DEL, C1), cut to at most
    /// ``maximumReasonBytes`` of UTF-8 on a character boundary. Cleaning twice changes nothing.
    public static func cleaned(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars where scalar.properties.generalCategory != .control {
            let length = String(scalar).utf8.count
            guard bytes + length <= maximumReasonBytes else { break }
            bytes += length
            kept.append(scalar)
        }
        return String(kept)
    }

    /// Parses what a refused sender read from the call before the end of the stream. Nil unless `bytes` is one
    /// whole message of this shape: `HTTP/1.1 NNN …` with a status of 400–599, a `Content-Length` (at most
    /// ``maximumBytes``) that the body fills, at most ``maximumBytes`` in all. Header names are case-insensitive;
    /// other header lines are ignored. The reason is the body's first line, ``cleaned(_:)``.
    public static func parse(_ bytes: [UInt8]) -> RefusalMessage? {
        guard bytes.count <= maximumBytes else { return nil }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }) else {
            return nil
        }
        let lines = bytes[..<end].split(separator: 10, omittingEmptySubsequences: false).map { line -> [UInt8] in
            var line = Array(line)
            if line.last == 13 { line.removeLast() }
            return line
        }
        guard let statusLine = lines.first, statusLine.starts(with: Array("HTTP/1.1 ".utf8)), statusLine.count >= 12 else { return nil }
        let digits = statusLine[9..<12]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }), statusLine.count == 12 || statusLine[12] == 0x20,
              let status = Int(String(decoding: digits, as: UTF8.self)), (400...599).contains(status)
        else { return nil }
        var length: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A) else { return nil }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            guard name == "content-length" else { continue }
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: [" ", "\t"])
            guard length == nil, !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), value.utf8.count <= 4,
                  let parsed = Int(value), parsed <= maximumBytes
            else { return nil }
            length = parsed
        }
        let bodyStart = end + 4
        guard let length, bytes.count - bodyStart == length else { return nil }
        let firstLine = bytes[bodyStart...].prefix { $0 != 0x0A && $0 != 0x0D }
        return RefusalMessage(status: status, reason: cleaned(String(decoding: firstLine, as: UTF8.self)))
    }
}

private extension String {
    func trimmingCharacters(in set: Set<Character>) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
