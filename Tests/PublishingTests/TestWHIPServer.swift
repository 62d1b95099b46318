import DTLS
import ICE
import PeerConnection
import ScreencastSupport
import Signaling
import Synchronization
import XCTest

/// A tiny WHIP server (RFC 9725) made of our own parts: the Signaling HTTP server (libmicrohttpd) and an
/// answering ``PeerConnection`` per session, whose answer is turned `recvonly` (our answerer is a sender:
/// it answers a sendonly offer `inactive`). Our answerer does not decrypt RTP, so the media that reaches
/// it shows as SRTP datagrams counted under `dropped.rtp`.
///
/// `POST /whip` (Bearer token checked) redirects 307 to `/ingest`, which answers 201 with `Location:
/// resources/<n>`, `ETag` and a STUN `Link`; `DELETE /ingest/resources/<n>` (the Location `ingest/resources/<n>` is relative to `/ingest`) ends the session.
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

    init(token: String = "s3cret") throws {
        self.token = token
        let configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"]), certificate: try DTLSCertificate.shared())
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
                    let peer = try PeerConnection.answering(
                        offer: String(decoding: request.body, as: UTF8.self), id: id, configuration: configuration, logger: logger
                    ) { event in
                        if event == .connected { state.withLock { $0.connected += 1 } }
                    }
                    state.withLock { $0.peers[id] = peer }
                    let answer = peer.answer.replacingOccurrences(of: "a=inactive", with: "a=recvonly")
                    return HTTPResponse(status: 201, headers: [
                        "Content-Type": "application/sdp", "Location": "ingest/resources/\(id)", "ETag": "\"\(id)\"",
                        "Link": "<stun:127.0.0.1:3478>; rel=\"ice-server\"",
                    ], body: Array(answer.utf8))
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

    /// The session's peer as the server sees it.
    func snapshot(_ id: String) -> PeerConnection.Snapshot? { state.withLock { $0.peers[id] }?.snapshot() }

    /// Ends a session from the server's side (DTLS close_notify to the publisher), as an SFU restarting does.
    func drop(_ id: String) {
        state.withLock { $0.peers.removeValue(forKey: id) }?.close(reason: "server dropped the session")
    }

    func stop() {
        server.stop()
        for peer in state.withLock({ $0.peers.values }) { peer.close() }
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
