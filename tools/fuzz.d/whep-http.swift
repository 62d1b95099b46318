// Fuzz target: the call's HTTP routes (SignalingServer.routes: the viewer page, /stats, /healthz, the icon,
// WHEP POST/PATCH/DELETE, CORS preflights) behind HTTPRouter's two stages, as libmicrohttpd hands them a
// request (ServerCore.access: the headers first, then the body up to the route's limit).
//
// Input: [flags] [an HTTP/1.1 request: request line, header lines, empty line, body…]
//   flags bit 0: a bearer token is configured ("fuzz-token"); bits 1–2: how the session provider behaves:
//   0 as a PeerConnection would (the real SDP parser and answer builder and a real DTLSEndpoint; ICE and the
//   RTP sender chain are left out), 1 full (503), 2 failing (500), 3 handing back a session id that is not
//   URL-safe; bit 3: /stats has no text form; bit 4: session "fuzz-session-1" exists.
// Requests libmicrohttpd would refuse itself (a malformed request line or header line, a NUL, a body
// shorter than its Content-Length) are skipped.
// Properties: a 5xx only when the provider itself failed on this request (never for a fault of the
// request: malformed, unanswerable or oversized offers are 4xx); every 4xx says why in its body; only WHEP's
// responses carry CORS; no CR, LF or NUL in a header; a 201 has its Location and an answer that parses;
// 405 has Allow, 401 WWW-Authenticate; with a token, nothing reaches the provider unauthorised; every log
// line (debug level) is one line without control bytes.
import RTP
import ScreencastSupport
@testable import Signaling
import SDP
import DTLS

private let certificate = try! DTLSCertificate.generate()
private let token = "fuzz-token"
private let knownSession = "fuzz-session-1"

/// The session side. @unchecked Sendable: libFuzzer runs one input at a time on one thread and each input
/// makes its own provider; nothing is shared across threads.
private final class Sessions: WHEPSessionProvider, @unchecked Sendable {
    var mode: UInt8 = 0
    var sessionExists = false
    var calls = 0
    var failed = false

    /// Ready for the next input.
    func reset(mode: UInt8, sessionExists: Bool) {
        self.mode = mode
        self.sessionExists = sessionExists
        calls = 0
        failed = false
    }

    func createSession(offer: String) throws(SignalingError) -> WHEPSession {
        calls += 1
        switch mode {
        case 1: failed = true; throw .unavailable("fuzz: no more viewers")
        case 2: failed = true; throw .internalFailure("fuzz: ICE agent did not start")
        default: break
        }
        let answer: String
        do {
            answer = try answerAsAPeerConnectionWould(offer)
        } catch {
            throw Self.signalingError(error)
        }
        if mode == 3 { failed = true }
        return WHEPSession(id: mode == 3 ? "not/url safe" : knownSession, answer: answer)
    }

    func updateSession(id: String, fragment: String) throws(SignalingError) -> String? {
        calls += 1
        guard sessionExists, id == knownSession else { throw .unknownSession(id) }
        if mode == 2 { failed = true; throw .internalFailure("fuzz: ICE agent gone") }
        // PeerConnection.applyTrickle's reading: candidate lines must parse, a different ufrag is a restart.
        for (index, line) in fragment.split(whereSeparator: \.isNewline).enumerated() {
            let text = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            if text.hasPrefix("a=ice-ufrag:"), text != "a=ice-ufrag:fuzz" {
                throw Self.signalingError(.badAttribute(line: index + 1, name: "ice-ufrag", reason: "ICE restart is not supported"))
            }
            guard text.hasPrefix("a=candidate:") else { continue }
            do { _ = try ICECandidate(parsing: text) } catch {
                throw Self.signalingError(.badAttribute(line: index + 1, name: "candidate", reason: "\(error)"))
            }
        }
        return nil
    }

    /// The Sharing module's mapping (SignalingError.init(SDPError)), which this target does not link: too large
    /// 413, malformed 400, other faults of the offer 422, ours 500.
    static func signalingError(_ error: SDPError) -> SignalingError {
        guard error.isPeerError else { return .internalFailure(error.description) }
        if case .tooLarge = error { return .refused(.tooLarge, reason: error.description) }
        return .refused(error.isMalformed ? .malformed : .unanswerable, reason: error.description)
    }

    func deleteSession(id: String) -> Bool {
        calls += 1
        return sessionExists && id == knownSession
    }
}

/// PeerConnection.answering up to the sockets: parse, a trial answer, the answer, the DTLS set-up.
private func answerAsAPeerConnectionWould(_ text: String) throws(SDPError) -> String {
    let offer = try SDPParser().parse(text)
    let trial = LocalMediaParameters(
        iceUfrag: "trial", icePwd: String(repeating: "x", count: 22), fingerprint: certificate.fingerprint,
        videoSSRC: 1, rtxSSRC: 2, cname: "trial", sessionID: 1)
    _ = try VideoAnswerBuilder.answer(offer, local: trial)
    let local = LocalMediaParameters(
        iceUfrag: "fuzz", icePwd: "fuzzfuzzfuzzfuzzfuzzfuzz", fingerprint: certificate.fingerprint,
        candidates: [ICECandidate(foundation: "1", priority: 2_122_260_223, address: "127.0.0.1", port: 40_000, kind: .host)],
        videoSSRC: 0x1234_5678, rtxSSRC: 0x9ABC_DEF0, cname: "fuzzcname", sessionID: 4_242_424_242)
    let (answer, negotiated) = try VideoAnswerBuilder.answer(offer, local: local)
    do {
        _ = try DTLSEndpoint(configuration: DTLSConfiguration(negotiated: negotiated, certificate: certificate))
    } catch {
        throw .invalidConfiguration("DTLS: \(error)")
    }
    return answer.serialized()
}

/// A request as libmicrohttpd would hand it over, or nil where it would refuse the bytes itself.
private struct WireRequest {
    var request: HTTPRequest
    var declaredLength: Int?
    var body: [UInt8]

    init?(_ bytes: ArraySlice<UInt8>) {
        var headerEnd = bytes.endIndex
        var bodyStart = bytes.endIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 0x0A {
                let next = bytes.index(after: index)
                if next < bytes.endIndex, bytes[next] == 0x0A { headerEnd = index; bodyStart = next + 1; break }
                if next + 1 < bytes.endIndex, bytes[next] == 0x0D, bytes[next + 1] == 0x0A { headerEnd = index; bodyStart = next + 2; break }
            }
            index += 1
        }
        let head = bytes[bytes.startIndex..<headerEnd]
        guard !head.contains(0) else { return nil }
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
        }
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[0].allSatisfy(\.isTokenCharacter),
              requestLine[1].hasPrefix("/") || requestLine[1] == "*", requestLine[2].hasPrefix("HTTP/1.")
        else { return nil }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon > line.startIndex,
                  line[..<colon].allSatisfy(\.isTokenCharacter)
            else { return nil }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingWhitespace())
        }
        let target = requestLine[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if path.count == 2 {
            for argument in path[1].split(separator: "&") {
                let pair = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = percentDecoded(pair[0], plus: true)
                if query[name] == nil { query[name] = pair.count == 2 ? percentDecoded(pair[1], plus: true) : "" }
            }
        }
        request = HTTPRequest(method: String(requestLine[0]), path: percentDecoded(path[0], plus: false), query: query, headers: headers)
        declaredLength = headers["Content-Length"].flatMap { Int($0.trimmingWhitespace()) }
        let rest = bytes[bodyStart...]
        if let declaredLength {
            guard declaredLength >= 0, declaredLength <= rest.count else { return nil }  // it would wait for the rest
            body = Array(rest.prefix(declaredLength))
        } else if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
            body = Array(rest)  // as if already de-chunked
        } else {
            body = []  // RFC 9112 §6.3: no length, no body
        }
    }
}

private func percentDecoded(_ text: Substring, plus: Bool) -> String {
    var bytes: [UInt8] = []
    var utf8 = Array(text.utf8)[...]
    while let byte = utf8.popFirst() {
        if byte == 0x25, utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        } else {
            bytes.append(plus && byte == 0x2B ? 0x20 : byte)
        }
    }
    if let nul = bytes.firstIndex(of: 0) { bytes = Array(bytes[..<nul]) }  // a C string ends there
    return String(decoding: bytes, as: UTF8.self)
}

extension Character {
    /// RFC 9110 §5.6.2 tchar.
    fileprivate var isTokenCharacter: Bool {
        guard utf8.count == 1, let value = asciiValue else { return false }
        switch value {
        case 0x22, 0x28, 0x29, 0x2C, 0x2F, 0x3A...0x40, 0x5B...0x5D, 0x7B, 0x7D: return false  // "(),/:;<=>?@[\]{}
        case 0x21...0x7E: return true
        default: return false
        }
    }
}

/// One provider for every input (reset each time), and one router per configuration (token, text stats):
/// building the routes renders the viewer page, which would otherwise dominate every run.
private let sessions = Sessions()
private let routers: [HTTPRouter] = (0..<4).map { variant in
    var configuration = SignalingConfiguration(token: variant & 1 != 0 ? BearerToken(token) : nil)
    configuration.sourceFramesPerSecond = 30
    let stats: @Sendable () -> JSONValue = { .object([("viewers", 1), ("version", "fuzz")]) }
    var statsText: (@Sendable () -> String)?
    if variant & 2 == 0 { statsText = { "fuzz stats\n" } }
    let output = LogOutput { line in
        check(!line.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "a log line holds a control byte: \(Array(line.utf8))")
    }
    let logger = Logger(component: "fuzz", threshold: .debug, output: output)
    return HTTPRouter(routes: SignalingServer.routes(
        configuration: configuration, sessions: sessions, stats: stats, statsText: statsText, logger: logger))
}

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let flags = input.byte()
    guard let wire = WireRequest(input.rest()) else { return }
    sessions.reset(mode: (flags >> 1) & 3, sessionExists: flags & 16 != 0)
    let router = routers[Int(flags & 1) | (flags & 8 != 0 ? 2 : 0)]

    // ServerCore.access: the header stage, then the body (413 when it outgrows the route's limit).
    let response: HTTPResponse
    switch router.begin(wire.request, contentLength: wire.declaredLength) {
    case .respond(let early): response = early
    case .readBody(let pending):
        response = wire.body.count > pending.limit ? router.bodyTooLarge(limit: pending.limit, crossOrigin: pending.route.crossOrigin) : router.finish(pending, body: wire.body)
    }

    let request = wire.request
    let status = response.status
    var context: String { "\(request.method) \(request.path) → \(status) \(response.bodyText.prefix(200))" }
    check((200...599).contains(status), "status \(status): \(context)")
    if status >= 500 { check(sessions.failed, "a 5xx for a request the provider did not fail: \(context)") }
    if status >= 400 { check(!response.body.isEmpty, "a \(status) without a reason: \(context)") }
    // CORS only as wide as needed: WHEP's routes carry it, the page, /stats and the rest never do.
    check(response.headers["Access-Control-Allow-Origin"] == nil || request.path.hasPrefix("/whep"), "CORS outside WHEP: \(context)")
    for (name, value) in response.headers {
        check(!(name + value).utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "header \(name) holds CR, LF or NUL: \(context)")
    }
    switch status {
    case 201:
        check(response.headers["Location"] == "/whep/" + knownSession, "201 with Location \(String(describing: response.headers["Location"]))")
        check((try? SDPParser().parse(response.body)) != nil, "201 with an answer that does not parse: \(context)")
    case 401: check(response.headers["WWW-Authenticate"] != nil, "401 without WWW-Authenticate")
    case 405: check(response.headers["Allow"] != nil, "405 without Allow")
    default: break
    }
    if flags & 1 != 0, sessions.calls > 0 {
        let authorization = request.headers["Authorization"]?.trimmingWhitespace() ?? ""
        let presented = authorization.lowercased().hasPrefix("bearer ") ? String(authorization.dropFirst(7)).trimmingWhitespace() : ""
        check(presented == token, "the provider was reached with Authorization '\(authorization)': \(context)")
    }
}
