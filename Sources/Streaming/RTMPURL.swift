/// An RTMP destination: `rtmp://HOST[:PORT]/APP[/…]/KEY` or `rtmps://…`; the stream key is the URL's last
/// path element, or given apart (`--rtmp-key-file`, so it is not in `ps`), then appended as that element.
/// ``redacted`` is what logs and `/stats` show: the key replaced by `***`.
public struct RTMPURL: Sendable, Equatable, CustomStringConvertible {
    /// The full URL libavformat opens (with the key).
    public let url: String
    /// `rtmp` or `rtmps`.
    public let scheme: String
    /// Host and port as given.
    public let authority: String
    /// The application path (`live`, `app/sub`).
    public let application: String
    /// The stream key.
    public let key: String

    /// - Parameter key: the stream key given apart; nil: the URL's last path element is the key.
    /// - Throws: ``StreamingError/badURL(_:)`` with the reason.
    public init(_ text: String, key separateKey: String? = nil) throws(StreamingError) {
        let lower = text.lowercased()
        guard let schemeEnd = lower.range(of: "://") else { throw .badURL("'\(text)' is not an rtmp:// or rtmps:// URL") }
        let scheme = String(lower[..<schemeEnd.lowerBound])
        guard scheme == "rtmp" || scheme == "rtmps" else { throw .badURL("'\(scheme)://' is not rtmp:// or rtmps://") }
        let rest = text[schemeEnd.upperBound...]
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard let authority = parts.first, !authority.isEmpty else { throw .badURL("\(scheme):// URL without a host") }
        guard !authority.contains("@") else { throw .badURL("\(scheme):// URL with user info: put credentials in the key") }
        if let colon = authority.lastIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else { throw .badURL("bad port '\(port)' in \(scheme):// URL") }
        }
        guard !text.contains(where: { $0 == " " || $0 == "\n" || $0 == "\t" }) else { throw .badURL("whitespace in the RTMP URL") }
        var path = parts.dropFirst().map(String.init)
        while path.last == "" { path.removeLast() }
        let key: String
        if let separateKey {
            let trimmed = separateKey.trimmingWhitespace()
            guard !trimmed.isEmpty else { throw .badURL("the stream key is empty") }
            key = trimmed
        } else {
            guard path.count >= 2, let last = path.last, !last.isEmpty else {
                throw .badURL("\(scheme):// URL needs /APP/KEY (the stream key as the last path element), or --rtmp-key-file")
            }
            key = last
            path.removeLast()
        }
        guard !path.isEmpty, !path.contains(""), !path.joined().isEmpty else { throw .badURL("\(scheme):// URL without an application (/APP)") }
        self.scheme = scheme
        self.authority = String(authority)
        self.application = path.joined(separator: "/")
        self.key = key
        url = "\(scheme)://\(authority)/\(application)/\(key)"
    }

    /// The URL with the key as `***` (for logs, `/stats`).
    public var redacted: String { "\(scheme)://\(authority)/\(application)/***" }

    public var description: String { redacted }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
