/// An HTTP response's status and header fields, read from the raw head libcurl hands over (RFC 9112 §4
/// status line, §5 field lines; HTTP/2's pseudo status line as libcurl prints it, `HTTP/2 201`).
///
/// Incremental: ``feed(_:)`` takes bytes as they come and returns the head once the blank line ending it
/// arrived. Interim 1xx blocks (RFC 9110 §15.2) are skipped: the head returned is the final one.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The status code (100…599).
    public var status: Int
    /// Field lines in order, names as sent (compare with ``values(_:)``, which ignores case).
    public var fields: [(name: String, value: String)]

    public static func == (a: Self, b: Self) -> Bool {
        a.status == b.status && a.fields.map(\.name) == b.fields.map(\.name) && a.fields.map(\.value) == b.fields.map(\.value)
    }

    /// Every value of the field `name` (case-insensitive, RFC 9110 §5.1), in order.
    public func values(_ name: String) -> [String] {
        let lower = name.lowercased()
        return fields.filter { $0.name.lowercased() == lower }.map(\.value)
    }

    /// The first value of `name`.
    public func value(_ name: String) -> String? { values(name).first }

    /// The incremental reader.
    public struct Parser: Sendable {
        /// A head larger than this is refused, bytes (a named limit: WHIP and Janus heads are ~1 KiB).
        public static let limit = 16 * 1024
        private var line: [UInt8] = []
        private var status: Int?
        private var fields: [(name: String, value: String)] = []
        private var total = 0
        private var done = false

        public init() {}

        /// Reads `bytes`; returns the final head once complete (bytes after it are ignored).
        /// - Throws: ``PublishingError/malformedResponse(url:reason:)`` (url empty: the caller knows it).
        public mutating func feed(_ bytes: some Sequence<UInt8>) throws(PublishingError) -> HTTPResponseHead? {
            for byte in bytes {
                guard !done else { break }
                total += 1
                guard total <= Self.limit else { throw Self.bad("the head exceeds \(Self.limit) bytes") }
                if byte != 0x0A {
                    line.append(byte)
                    continue
                }
                if line.last == 0x0D { line.removeLast() }
                let text = line
                line = []
                if let head = try take(text) { return head }
            }
            return nil
        }

        /// One line without its end: the status line, a field line, or the blank line ending a block.
        private mutating func take(_ bytes: [UInt8]) throws(PublishingError) -> HTTPResponseHead? {
            // RFC 9112 §2.2: a bare CR makes the element invalid. Checked on the bytes: a String search for
            // "\r" can miss a CR followed by a combining mark (one grapheme cluster to an optimized search;
            // the fuzzer found one in a Link value).
            guard !bytes.contains(0x0D) else { throw Self.bad("a bare CR in a line (RFC 9112 §2.2)") }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw Self.bad("a line is not UTF-8 text") }
            guard let current = status else {
                status = try Self.statusCode(text)
                return nil
            }
            if text.isEmpty {
                if (100...199).contains(current) {
                    status = nil
                    fields = []
                    return nil
                }
                done = true
                return HTTPResponseHead(status: current, fields: fields)
            }
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { throw Self.bad("field line without a name: \(text)") }
            let name = String(text[..<colon])
            guard !name.contains(" "), !name.contains("\t") else { throw Self.bad("space in the field name \(name)") }
            let value = text[text.index(after: colon)...].trimmingCharacters(in: " \t")
            fields.append((name, value))
            return nil
        }

        /// `HTTP/1.1 201 Created`, `HTTP/2 201`: the three-digit code.
        static func statusCode(_ line: String) throws(PublishingError) -> Int {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].count == 3, let code = Int(parts[1]), (100...599).contains(code) else {
                throw bad("not a status line: \(line.prefix(80))")
            }
            return code
        }

        static func bad(_ reason: String) -> PublishingError { .malformedResponse(url: "", reason: reason) }
    }

    /// Parses a whole head at once.
    /// - Throws: ``PublishingError/malformedResponse(url:reason:)``, also when it ends before its blank line.
    public static func parse(_ bytes: [UInt8]) throws(PublishingError) -> HTTPResponseHead {
        var parser = Parser()
        guard let head = try parser.feed(bytes) else { throw Parser.bad("the head ends before its blank line") }
        return head
    }
}

extension StringProtocol {
    /// Drops leading and trailing Unicode scalars of `set` (scalars, so "\r\n" is two of them).
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set.unicodeScalars)
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, drop.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, drop.contains(last) { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
