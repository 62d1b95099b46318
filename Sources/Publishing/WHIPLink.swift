public import ICE

/// One `Link` header target (RFC 8288 §3) and its parameters, names lower-cased.
public struct WebLink: Sendable, Equatable {
    public var target: String
    public var parameters: [String: String]

    /// Parses every link of the `Link` field values given (each may hold several, comma-separated).
    /// - Throws: ``PublishingError/whipProtocol(url:reason:)`` (url empty) for a link that is not
    ///   `<URI>` followed by `; name[=value]` parameters (token or quoted-string values).
    public static func parse(_ values: [String]) throws(PublishingError) -> [WebLink] {
        var links: [WebLink] = []
        for value in values {
            var rest = Substring(value)
            while true {
                skipSpace(&rest)
                if rest.isEmpty { break }
                guard rest.first == "<", let close = rest.firstIndex(of: ">") else { throw bad("a link must start with <URI>") }
                var link = WebLink(target: String(rest[rest.index(after: rest.startIndex)..<close]), parameters: [:])
                rest = rest[rest.index(after: close)...]
                while true {
                    skipSpace(&rest)
                    guard rest.first == ";" else { break }
                    rest.removeFirst()
                    skipSpace(&rest)
                    let name = rest.prefix { $0.isLinkTokenChar }
                    guard !name.isEmpty else { throw bad("a link parameter without a name") }
                    rest = rest.dropFirst(name.count)
                    skipSpace(&rest)
                    var parameter = ""
                    if rest.first == "=" {
                        rest.removeFirst()
                        skipSpace(&rest)
                        parameter = try quotedOrToken(&rest)
                    }
                    link.parameters[name.lowercased()] = parameter
                }
                links.append(link)
                skipSpace(&rest)
                if rest.isEmpty { break }
                guard rest.first == "," else { throw bad("links must be separated by commas") }
                rest.removeFirst()
            }
        }
        return links
    }

    /// A token or a quoted-string (RFC 9110 §5.6.4: `\` escapes the next character).
    private static func quotedOrToken(_ rest: inout Substring) throws(PublishingError) -> String {
        guard rest.first == "\"" else {
            let token = rest.prefix { $0.isLinkTokenChar }
            guard !token.isEmpty else { throw bad("a link parameter's value is empty") }
            rest = rest.dropFirst(token.count)
            return String(token)
        }
        rest.removeFirst()
        var text = ""
        while let character = rest.first {
            rest.removeFirst()
            switch character {
            case "\"": return text
            case "\\":
                guard let escaped = rest.first else { throw bad("a quoted string ends in a backslash") }
                rest.removeFirst()
                text.append(escaped)
            default: text.append(character)
            }
        }
        throw bad("a quoted string is not closed")
    }

    private static func skipSpace(_ rest: inout Substring) {
        while rest.first == " " || rest.first == "\t" { rest.removeFirst() }
    }

    private static func bad(_ reason: String) -> PublishingError { .whipProtocol(url: "", reason: "Link header: \(reason)") }
}

extension Character {
    /// RFC 9110 §5.6.2 tchar.
    var isLinkTokenChar: Bool {
        isASCII && (isLetter || isNumber || "!#$%&'*+-.^_`|~".contains(self))
    }
}

/// The ICE servers a WHIP server offers in `Link` headers with `rel="ice-server"` (RFC 9725 §4.6):
/// `stun:` URLs and `turn:`/`turns:` URLs with `username` and `credential`.
public struct WHIPICEServers: Sendable, Equatable {
    public var stun: [ICEServerAddress] = []
    public var turn: [TURNServer] = []
    /// Links that could not be used, with why (logged; one bad link never fails the session).
    public var skipped: [String] = []

    public init(links: [WebLink]) {
        for link in links where link.parameters["rel"]?.split(separator: " ").contains("ice-server") == true {
            let url = link.target
            if url.hasPrefix("stun:") {
                let host = url.dropFirst(5).split(separator: "?").first.map(String.init) ?? ""
                do { stun.append(try ICEServerAddress(parsing: host)) } catch { skipped.append("\(url): \(error)") }
            } else if url.hasPrefix("turn:") || url.hasPrefix("turns:") {
                guard let username = link.parameters["username"], let credential = link.parameters["credential"] else {
                    skipped.append("\(url): no username/credential")
                    continue
                }
                do { turn.append(try TURNServer(url: url, username: username, credential: credential)) } catch {
                    skipped.append("\(url): \(error)")
                }
            } else {
                skipped.append("\(url): not a stun:/turn: URL")
            }
        }
    }
}
