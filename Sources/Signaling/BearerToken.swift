/// The shared secret of `--token T`: WHEP requests must carry `Authorization: Bearer T`
/// (RFC 9725 §4.7.1, using RFC 6750 §2.1's header form).
public struct BearerToken: Sendable {
    private let secret: [UInt8]

    /// nil for an empty token (no protection asked for).
    public init?(_ token: String) {
        guard !token.isEmpty else { return nil }
        secret = Array(token.utf8)
    }

    /// True when `authorization` is `Bearer <token>` with this token. The scheme is case-insensitive
    /// (RFC 9110 §11.1); the token is compared in time independent of where it differs.
    public func authorizes(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let text = authorization.trimmingWhitespace()
        guard text.count > 7, text.prefix(7).lowercased() == "bearer " else { return false }
        let presented = Array(text.dropFirst(7).trimmingWhitespace().utf8)
        return Self.constantTimeEqual(presented, secret)
    }

    /// True when the request carries the token either way a browser can: `Authorization: Bearer <token>`
    /// (fetches, WHEP) or `?token=<token>` (a navigation to the page, a link). Constant-time as above.
    public func authorizes(_ request: HTTPRequest) -> Bool {
        if authorizes(request.headers["Authorization"]) { return true }
        guard let presented = request.query["token"] else { return false }
        return Self.constantTimeEqual(Array(presented.utf8), secret)
    }

    /// Compares every byte of the longer input whatever the first difference, so timing reveals at
    /// most the lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt64(a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= UInt64(x ^ y)
        }
        return difference == 0
    }

    /// The 401 answer (RFC 6750 §3): `WWW-Authenticate: Bearer`, with `error="invalid_token"` when a
    /// token was presented but is wrong.
    static func challenge(presented: Bool) -> HTTPResponse {
        let value = presented ? "Bearer realm=\"screencast\", error=\"invalid_token\"" : "Bearer realm=\"screencast\""
        return .text(401, presented ? "invalid bearer token" : "bearer token required", headers: ["WWW-Authenticate": value])
    }
}
