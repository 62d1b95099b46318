import DTLS
import ICE
import PeerConnection
import ScreencastSupport
import Signaling
import Synchronization
import TestSupport
import XCTest

/// A tiny WHIP server (RFC 9725) made of our own parts: the Signaling HTTP server (libmicrohttpd) and an
/// answering ``PeerConnection`` per session, whose answer is turned `recvonly` (our answerer is a sender:
/// it answers a sendonly offer `inactive`). Our answerer does not decrypt RTP, so the media that reaches
/// it shows as SRTP datagrams counted under `dropped.rtp`.
///
/// `POST /whip` (Bearer token checked) redirects 307 to `/ingest`, which answers 201 with `Location:
/// resources/<n>`, `ETag` and a STUN `Link`; `DELETE /ingest/resources/<n>` (the Location `ingest/resources/<n>` is relative to `/ingest`) ends the session.
/// `PATCH /ingest/resources/<n>` with an ICE restart fragment (RFC 9725 §4.3.3) restarts the session's ICE
/// for real and answers 200 with the server's fragment (its direct candidates) and a new `ETag`.
/// With `relayed`, each session's answer names a ``UDPRelay`` in front of the server's socket instead of
/// the socket itself, so ``breakPath(_:)`` can kill the publisher's path.
final class TestWHIPServer: @unchecked Sendable {
    // @unchecked Sendable: `state` is a Mutex; the server is thread-safe.
    struct State {
        var peers: [String: PeerConnection] = [:]
        var posts = 0
        var deletes: [String] = []
        var connected = 0
        /// Status and body to answer the next POSTs with instead of a session (nil: answer normally).
        var failWith: (Int, String)?
        /// A 201 with this body instead of our answer (a garbage answer, one without VP8, …).
        var answerOverride: String?
        /// Each PATCH: the session, its `If-Match`, the fragment's new ufrag.
        var patches: [(id: String, ifMatch: String?, ufrag: String?)] = []
        /// Status and body to answer PATCHes with instead of restarting (nil: restart).
        var patchFailure: (Int, String)?
        /// The relay in front of each session's socket (with `relayed`).
        var relays: [String: UDPRelay] = [:]
    }

    /// The sessions and counts, shared with the route handlers.
    final class Shared: Sendable {
        let mutex = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { mutex.withLock { body(&$0) } }
    }
    let state = Shared()
    private(set) var server: HTTPServer!
    let token: String

    var url: String { "http://127.0.0.1:\(server.port)/whip" }

    init(token: String = "s3cret", relayed: Bool = false) throws {
        self.token = token
        let configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], failedGracePeriod: .seconds(relayed ? 15 : 5)),
            certificate: try DTLSCertificate.shared())
        let logger = Logger(component: "whip-server", threshold: .error)
        let routes = [
            HTTPRoute("POST", .exact("/whip"), bodyLimit: 64 * 1024) { [token] (request: HTTPRequest) -> HTTPResponse in
                guard request.headers["Authorization"] == "Bearer \(token)" else { return .text(401, "bad token") }
                return HTTPResponse(status: 307, headers: ["Location": "/ingest"])
            },
            HTTPRoute("POST", .exact("/ingest"), bodyLimit: 64 * 1024) { [state, token] (request: HTTPRequest) -> HTTPResponse in
                guard request.headers["Authorization"] == "Bearer \(token)" else { return .text(401, "bad token") }
                let (failure, number) = state.withLock { (s: inout State) -> ((Int, String)?, Int) in
                    s.posts += 1
                    return (s.failWith, s.posts)
                }
                if let (status, body) = failure { return .text(status, body) }
                if let body = state.withLock({ $0.answerOverride }) {
                    return HTTPResponse(status: 201, headers: ["Content-Type": "application/sdp", "Location": "ingest/resources/x"], body: Array(body.utf8))
                }
                let id = "s\(number)"
                do {
                    var offer = String(decoding: request.body, as: UTF8.self)
                    // Relayed: the publisher's candidates are not checked from here (that would find the direct
                    // path); it is learned through the relay as peer-reflexive.
                    if relayed { offer = offer.components(separatedBy: "\r\n").filter { !$0.hasPrefix("a=candidate:") && $0 != "a=end-of-candidates" }.joined(separator: "\r\n") }
                    let peer = try PeerConnection.answering(
                        offer: offer, id: id, configuration: configuration, logger: logger
                    ) { event in
                        if event == .connected { state.withLock { $0.connected += 1 } }
                    }
                    state.withLock { $0.peers[id] = peer }
                    var answer = peer.answer.replacingOccurrences(of: "a=inactive", with: "a=recvonly")
                    if relayed { answer = try Self.relay(answer, id: id, state: state) }
                    return HTTPResponse(status: 201, headers: [
                        "Content-Type": "application/sdp", "Location": "ingest/resources/\(id)", "ETag": "\"\(id)\"",
                        "Link": "<stun:127.0.0.1:3478>; rel=\"ice-server\"",
                    ], body: Array(answer.utf8))
                } catch {
                    return .text(400, "\(error)")
                }
            },
            HTTPRoute("PATCH", .parameter(prefix: "/ingest/resources/"), bodyLimit: 16 * 1024) { [state, token] (request: HTTPRequest) -> HTTPResponse in
                guard request.headers["Authorization"] == "Bearer \(token)" else { return .text(401, "bad token") }
                let id = request.pathParameter ?? ""
                let fragment = try? ICERestartFragment(parsing: String(decoding: request.body, as: UTF8.self))
                let (peer, failure) = state.withLock { (s: inout State) -> (PeerConnection?, (Int, String)?) in
                    s.patches.append((id, request.headers["If-Match"], fragment?.ufrag))
                    return (s.peers[id], s.patchFailure)
                }
                if let (status, body) = failure { return .text(status, body) }
                guard let peer else { return .text(404, "no session \(id)") }
                guard request.headers["Content-Type"] == "application/trickle-ice-sdpfrag" else { return .text(415, "not an sdpfrag") }
                guard let fragment else { return .text(400, "not an ICE restart fragment") }
                do {
                    let ours = try peer.restartICE()
                    try peer.applyRestartAnswer(fragment)
                    return HTTPResponse(status: 200, headers: [
                        "Content-Type": "application/trickle-ice-sdpfrag", "ETag": "\"\(id)-r\(peer.iceRestarts)\"",
                    ], body: Array(ours.rendered().utf8))
                } catch {
                    return .text(400, "\(error)")
                }
            },
            HTTPRoute("DELETE", .parameter(prefix: "/ingest/resources/")) { [state] (request: HTTPRequest) -> HTTPResponse in
                let peer = state.withLock { (s: inout State) -> PeerConnection? in
                    s.deletes.append(request.pathParameter ?? "")
                    return s.peers.removeValue(forKey: request.pathParameter ?? "")
                }
                peer?.close(reason: "DELETE")
                return HTTPResponse(status: peer == nil ? 404 : 200)
            },
        ]
        server = try HTTPServer.start(
            endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0), router: HTTPRouter(routes: routes), logger: logger)
    }

    /// Puts a ``UDPRelay`` in front of the answer's host candidate (127.0.0.1) and names it instead.
    private static func relay(_ answer: String, id: String, state: Shared) throws -> String {
        var lines = answer.components(separatedBy: "\r\n")
        guard let index = lines.firstIndex(where: { $0.hasPrefix("a=candidate:") && $0.contains(" 127.0.0.1 ") }) else { return answer }
        var fields = lines[index].split(separator: " ").map(String.init)
        guard fields.count > 5, let port = UInt16(fields[5]) else { return answer }
        let relay = try UDPRelay(to: port)
        state.withLock { $0.relays[id] = relay }
        fields[5] = String(relay.port)
        lines[index] = fields.joined(separator: " ")
        return lines.joined(separator: "\r\n")
    }

    /// The publisher's path to a session dies (its relay drops everything both ways).
    func breakPath(_ id: String) { state.withLock { $0.relays[id] }?.block() }

    /// The session's peer as the server sees it.
    func snapshot(_ id: String) -> PeerConnection.Snapshot? { state.withLock { $0.peers[id] }?.snapshot() }

    /// Ends a session from the server's side (DTLS close_notify to the publisher), as an SFU restarting does.
    func drop(_ id: String) {
        state.withLock { $0.peers.removeValue(forKey: id) }?.close(reason: "server dropped the session")
    }

    func stop() {
        server.stop()
        for peer in state.withLock({ $0.peers.values }) { peer.close() }
        for relay in state.withLock({ $0.relays.values }) { relay.stop() }
    }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass.
func waitFor(_ seconds: Double, _ what: String, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool) {
    let end = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > end { return XCTFail("timed out after \(seconds) s waiting for \(what)", file: file, line: line) }
        usleep(20_000)
    }
}
