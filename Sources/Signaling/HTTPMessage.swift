/// Header fields in arrival (or output) order, looked up case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) { fields = elements.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Appends a field (repeated names are kept, in order).
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every field called `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        let wanted = name.lowercased()
        fields.removeAll { $0.name.lowercased() == wanted }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// One request as the router sees it. During the header stage (route checks) ``body`` is empty.
public struct HTTPRequest: Sendable {
    /// The method token as sent (`GET`, `POST`, …; case-sensitive per RFC 9110 §9.1).
    public var method: String
    /// The percent-decoded path, without the query.
    public var path: String
    /// Query arguments (percent-decoded; an argument without `=` has the value "").
    public var query: [String: String]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The `{id}` segment of a ``HTTPRoute/Path/parameter(prefix:)`` route, once matched.
    public var pathParameter: String?
    /// The client's IP address as text (`127.0.0.1`, `::1`), nil when unknown: per-address limits key on it.
    public var clientAddress: String?

    public init(method: String, path: String, query: [String: String] = [:], headers: HTTPHeaders = [:], body: [UInt8] = [],
                pathParameter: String? = nil, clientAddress: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.pathParameter = pathParameter
        self.clientAddress = clientAddress
    }

    /// The media type of `Content-Type` without parameters, lower-cased (`application/sdp`), or nil.
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = type.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed.lowercased()
    }
}

/// One response: status, header fields and body. `Content-Length` and `Date` are added by the server.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response; a newline is appended when missing.
    public static func text(_ status: Int, _ text: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers.set("Content-Type", "text/plain; charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: Array((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    /// The body as UTF-8 text (tests and logs).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Reason phrases for the statuses this module sends (RFC 9110 §15).
enum HTTPStatus {
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's OWS, RFC 9110 §5.6.3).
    func trimmingWhitespace() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
