// Fuzz target: what an SFU answers the publisher (Sources/Publishing), read as HTTPClient and the WHIP and
// Janus clients read it: the raw response head libcurl hands over (HTTPResponseHead, RFC 9112 §4–§5, interim
// 1xx blocks), the WHIP POST's 201 (RFC 9725 §4.2: Location resolved against the request URL, ETag, `Link`
// ICE servers per RFC 8288 / §4.6), the ICE restart PATCH's 200 (§4.3.3, a trickle-ice-sdpfrag), a 307/308's
// Location as the redirect loop resolves it, and the Janus HTTP API's JSON replies and long-poll events.
//
// Input: [mode] [head length u16] [head bytes…] [body…]
//   mode bits 0–1: the Janus reader given the body: reply + id, the answer in events, the end of a session,
//                  or none; bits 2–3: the request URL the response answers (four forms: a path, a port and a
//                  query, an IPv6 literal, https with a trailing slash); bits 4–7: the head is fed in chunks
//                  of that many bytes (0: all at once).
// Properties: the head reader ends in a head or a typed malformedResponse, the same fed in chunks as all
// at once; a head's status is 100…599, its field names are non-empty without white space, and no name or
// value holds CR or LF; the WHIP and Janus readers end in a value or a PublishingError of the kinds they
// document (never a trap); a WHIP session's answer is non-empty UTF-8 and its URL is the Location resolved;
// a relative Location (no scheme, not `//host`) resolves to the request URL's own origin, so a server
// cannot steer the token elsewhere with one; every ICE server taken from a Link parsed; an ID read from a
// Janus success is positive.
import Publishing
import ICE
import PeerConnection

private let requestURLs = [
    "http://127.0.0.1:8088/whip/endpoint",
    "http://sfu.example:8080/a/b/c?room=1#x",
    "http://[::1]:7080/whip",
    "https://sfu.example/whip/",
]
private let handle: UInt64 = 5

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let headLength = Int(input.u16())
    let head = Array(input.take(headLength))
    let body = Array(input.rest())
    let url = requestURLs[Int(mode >> 2) & 3]

    if let response = readHead(head, chunk: Int(mode >> 4), url: url, body: body) {
        readWHIP(response)
        readRedirect(response)
    }
    switch mode & 3 {
    case 0: janusReply(body)
    case 1: janusAnswer(body)
    case 2: janusEnd(body)
    default: break
    }
}

/// HTTPResponseHead: all at once and in chunks, the same result; a head that is well formed.
private func readHead(_ head: [UInt8], chunk: Int, url: String, body: [UInt8]) -> HTTPClientResponse? {
    let whole: Result<HTTPResponseHead, PublishingError>
    do { whole = .success(try HTTPResponseHead.parse(head)) } catch { whole = .failure(error) }

    if chunk > 0 {
        var parser = HTTPResponseHead.Parser()
        var chunked: Result<HTTPResponseHead, PublishingError> = .failure(.malformedResponse(url: "", reason: "the head ends before its blank line"))
        var offset = 0
        do {
            while offset < head.count {
                let end = min(head.count, offset + chunk)
                if let done = try parser.feed(head[offset..<end]) { chunked = .success(done); break }
                offset = end
            }
        } catch {
            chunked = .failure(error)
        }
        check(chunked == whole, "the head in \(chunk)-byte chunks gave \(chunked), all at once \(whole)")
    }

    switch whole {
    case .failure(let error):
        guard case .malformedResponse(let errorURL, _) = error, errorURL.isEmpty else { violated("the head reader threw \(error)") }
        return nil
    case .success(let parsed):
        check((100...599).contains(parsed.status), "status \(parsed.status)")
        check(!(100...199).contains(parsed.status), "an interim \(parsed.status) head was returned as the final one")
        for (name, value) in parsed.fields {
            check(!name.isEmpty && !name.contains(" ") && !name.contains("\t"), "field name '\(name)'")
            check(!(name + value).utf8.contains { $0 == 0x0D || $0 == 0x0A }, "field \(name) holds CR or LF")
            check(value.first != " " && value.first != "\t" && value.last != " " && value.last != "\t", "field \(name)'s value '\(value)' is not trimmed")
        }
        return HTTPClientResponse(url: url, status: parsed.status, head: parsed, body: body)
    }
}

/// WHIPSession(created:) and WHIPRestartAnswer(response:), as the WHIP client reads the POST and the PATCH.
private func readWHIP(_ response: HTTPClientResponse) {
    do {
        let session = try WHIPSession(created: response)
        check(response.status == 201, "a session from a \(response.status)")
        check(!session.answer.isEmpty, "an empty answer")
        guard let location = response.head.value("Location") else { violated("a session without a Location") }
        check(session.url == URLReference.resolve(location, against: response.url), "session URL \(session.url) is not Location \(location) resolved")
        check(session.etag == response.head.value("ETag"), "ETag \(String(describing: session.etag))")
        // Every server taken came from a Link that parsed; the rest are named in skipped.
        let links = (try? WebLink.parse(response.head.values("Link"))) ?? []
        let iceLinks = links.filter { $0.parameters["rel"]?.split(separator: " ").contains("ice-server") == true }
        check(session.iceServers.stun.count + session.iceServers.turn.count + session.iceServers.skipped.count == iceLinks.count,
              "\(iceLinks.count) ICE links gave \(session.iceServers)")
    } catch {
        switch error {
        case .httpStatus(let method, let errorURL, let status, _):
            check(method == "POST" && errorURL == response.url && status == response.status && status != 201, "\(error)")
        case .whipProtocol(let errorURL, _): check(errorURL == response.url && response.status == 201, "\(error)")
        default: violated("WHIPSession(created:) threw \(error)")
        }
    }
    do {
        let answer = try WHIPRestartAnswer(response: response)
        check(response.status == 200, "a restart answer from a \(response.status)")
        check(!answer.fragment.ufrag.isEmpty && !answer.fragment.password.isEmpty, "a restart answer without credentials")
    } catch {
        switch error {
        case .sessionGone: check(response.status == 404, "\(error) for a \(response.status)")
        case .httpStatus(let method, _, let status, _): check(method == "PATCH" && status != 200 && status != 404, "\(error)")
        case .whipProtocol: check(response.status == 200, "\(error) for a \(response.status)")
        default: violated("WHIPRestartAnswer(response:) threw \(error)")
        }
    }
}

/// A Location as HTTPClient's redirect loop and the WHIP client resolve it: a relative one stays on the
/// request's origin (the bearer token is sent there); an absolute one is taken as written.
private func readRedirect(_ response: HTTPClientResponse) {
    guard let location = response.head.value("Location") else { return }
    guard let resolved = URLReference.resolve(location, against: response.url) else {
        violated("\(location) does not resolve against \(response.url)")
    }
    let hasScheme = location.firstIndex(of: ":").map { colon in
        !location[..<colon].isEmpty && location[..<colon].allSatisfy { $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }
    } ?? false
    if hasScheme {
        check(resolved == location, "absolute \(location) resolved as \(resolved)")
    } else if !location.hasPrefix("//") {
        guard let base = URLReference.origin(of: response.url) else { violated("no origin for \(response.url)") }
        let origin = URLReference.origin(of: resolved)
        check(origin?.scheme == base.scheme && origin?.host == base.host && origin?.port == base.port,
              "relative Location \(location) against \(response.url) left the origin: \(resolved)")
    }
}

private func janusReply(_ body: [UInt8]) {
    do {
        let reply = try JanusMessage.reply(body)
        do {
            check(try JanusMessage.id(reply) > 0, "a zero id")
        } catch {
            guard case .janusProtocol = error else { violated("JanusMessage.id threw \(error)") }
        }
        _ = JanusMessage.pluginData(reply)
    } catch {
        switch error {
        case .janus, .videoRoom, .janusProtocol: break
        default: violated("JanusMessage.reply threw \(error)")
        }
    }
}

private func janusAnswer(_ body: [UInt8]) {
    do {
        _ = try JanusMessage.answer(inEvents: body, handle: handle)
    } catch {
        switch error {
        case .janus, .videoRoom, .janusProtocol: break
        default: violated("JanusMessage.answer threw \(error)")
        }
    }
}

private func janusEnd(_ body: [UInt8]) {
    do {
        _ = try JanusMessage.endOfSession(inEvents: body, handle: handle)
    } catch {
        guard case .janusProtocol = error else { violated("JanusMessage.endOfSession threw \(error) (only unreadable events throw)") }
    }
}
