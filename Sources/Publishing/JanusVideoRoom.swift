import Foundation
import ScreencastSupport
import Synchronization

/// Publishing into a Janus VideoRoom over the Janus HTTP API (`--janus URL --janus-room N`), as an
/// ``SFUTransport``: create a session, attach `janus.plugin.videoroom`, create the room when asked (VP8,
/// the bitrate cap), `joinandconfigure` as a publisher with our offer, long-poll for the answer, keep
/// the session alive every 25 s (Janus ends sessions silent for 60 s); on close `unpublish`, `leave`,
/// detach and destroy.
public struct JanusVideoRoom: SFUTransport {
    public struct Options: Sendable, Equatable {
        /// The API root, like `http://127.0.0.1:8088/janus`.
        public var url: String
        public var room: UInt64
        public var createRoom = false
        public var display = "screencast"
        public var pin: String?
        /// The room's secret (needed to create or edit a room that has one).
        public var secret: String?
        /// The room's bitrate cap, bits per second (Janus REMBs it to publishers); 0 leaves it uncapped.
        public var bitrate: UInt64 = 2_500_000
        /// The keepalive period, ms (below Janus's 60 s session timeout).
        public var keepaliveMillis = 25_000
        /// How long to wait for the answer event, ms.
        public var answerTimeoutMillis = 10_000

        public init(url: String, room: UInt64) {
            self.url = url
            self.room = room
        }
    }

    /// One publishing session: its ids and the keepalive thread's stop flag.
    final class Session: Sendable {
        let id: UInt64
        let handle: UInt64
        let stopped = Mutex(false)
        let wake = DispatchSemaphore(value: 0)
        init(id: UInt64, handle: UInt64) {
            self.id = id
            self.handle = handle
        }
    }

    public let options: Options
    public var http: HTTPClient
    public var server: String { "\(options.url) room \(options.room)" }

    public init(options: Options, http: HTTPClient = HTTPClient()) throws(PublishingError) {
        if let problem = URLReference.requestProblem(options.url) {
            throw .invalidConfiguration(
                "--janus needs an http:// or https:// URL with a host and no spaces, not '\(options.url.escapingNonPrintable)': \(problem)")
        }
        guard options.room > 0 else { throw .invalidConfiguration("--janus-room must be a positive number") }
        self.options = options
        self.http = http
    }

    // MARK: SFUTransport

    public func cancelInFlight() { http.cancellation.cancelInFlight() }

    public func open(
        offer: String, log: @escaping @Sendable (String) -> Void, lost: @escaping @Sendable (String) -> Void
    ) throws(PublishingError) -> (answer: String, session: any Sendable) {
        let sessionID = try JanusMessage.id(post(options.url, "create"))
        do {
            let handle = try JanusMessage.id(post("\(options.url)/\(sessionID)", "attach", ["plugin": "janus.plugin.videoroom"]))
            let session = Session(id: sessionID, handle: handle)
            if options.createRoom { try createRoom(session, log: log) }
            var join: [String: Any] = ["request": "joinandconfigure", "room": options.room, "ptype": "publisher", "display": options.display]
            if let pin = options.pin { join["pin"] = pin }
            _ = try message(session, join, jsep: ["type": "offer", "sdp": offer])
            let answer = try waitForAnswer(session)
            log("Janus session \(sessionID), handle \(handle), room \(options.room)")
            startKeepalive(session, lost: lost)
            startWatching(session, lost: lost)
            return (answer, session)
        } catch {
            _ = try? post("\(options.url)/\(sessionID)", "destroy")
            throw error
        }
    }

    public func close(_ session: any Sendable) throws(PublishingError) {
        guard let session = session as? Session else { return }
        session.stopped.withLock { $0 = true }
        session.wake.signal()
        _ = try? message(session, ["request": "unpublish"])
        _ = try? message(session, ["request": "leave"])
        _ = try? post("\(options.url)/\(session.id)/\(session.handle)", "detach")
        _ = try post("\(options.url)/\(session.id)", "destroy")
    }

    // MARK: Steps

    private func createRoom(_ session: Session, log: @Sendable (String) -> Void) throws(PublishingError) {
        var create: [String: Any] = [
            "request": "create", "room": options.room, "publishers": 1, "videocodec": "vp8", "audiocodec": "opus",
            "bitrate": options.bitrate, "description": "screencast",
        ]
        if let secret = options.secret { create["secret"] = secret }
        if let pin = options.pin { create["pin"] = pin }
        do {
            _ = try message(session, create)
            log("Janus room \(options.room) created (VP8, \(options.bitrate / 1000) kbps cap)")
        } catch .videoRoom(427, _) {
            log("Janus room \(options.room) exists already")
        }
    }

    /// Long-polls the session's events until the answer to our offer (or an error for our handle) comes.
    private func waitForAnswer(_ session: Session) throws(PublishingError) -> String {
        let deadline = DispatchTime.now() + .milliseconds(options.answerTimeoutMillis)
        while DispatchTime.now() < deadline {
            let remaining = Int((deadline.uptimeNanoseconds - min(DispatchTime.now().uptimeNanoseconds, deadline.uptimeNanoseconds)) / 1_000_000)
            let response = try http.request(
                "GET", "\(options.url)/\(session.id)?maxev=5&rid=\(UInt64(Date().timeIntervalSince1970 * 1000))",
                timeoutMillis: max(1_000, remaining + 1_000))
            guard response.status == 200 else { throw Self.status("GET", response) }
            if let answer = try JanusMessage.answer(inEvents: response.body, handle: session.handle) { return answer }
        }
        throw .answerTimeout(millis: options.answerTimeoutMillis)
    }

    /// A `keepalive` every period until the session is closed; failures are the session's end (the peer's
    /// ICE consent then fails too, and the publisher reconnects).
    private func startKeepalive(_ session: Session, lost: @escaping @Sendable (String) -> Void) {
        let url = "\(options.url)/\(session.id)"
        let period = options.keepaliveMillis
        let transport = self
        Thread.detachNewThread {
            while session.wake.wait(timeout: .now() + .milliseconds(period)) == .timedOut, !session.stopped.withLock({ $0 }) {
                do { _ = try transport.post(url, "keepalive") } catch {
                    if !session.stopped.withLock({ $0 }) { lost("Janus keepalive failed: \(error)") }
                    return
                }
            }
        }
    }

    /// Long-polls the session's events while it is open: a refused poll (Janus killed), a Janus error (458:
    /// the session timed out) or a `hangup`/`detached` for our handle ends the leg at once.
    private func startWatching(_ session: Session, lost: @escaping @Sendable (String) -> Void) {
        let url = "\(options.url)/\(session.id)"
        let http = self.http
        Thread.detachNewThread {
            while !session.stopped.withLock({ $0 }) {
                let reason: String?
                do {
                    let response = try http.request("GET", "\(url)?maxev=5&rid=\(UInt64(Date().timeIntervalSince1970 * 1000))", timeoutMillis: 40_000)
                    reason = response.status == 200 ? try JanusMessage.endOfSession(inEvents: response.body, handle: session.handle)
                        : "Janus long poll: HTTP \(response.status)"
                } catch {
                    reason = "Janus unreachable or session gone: \(error)"
                }
                if let reason {
                    if !session.stopped.withLock({ $0 }) { lost(reason) }
                    return
                }
            }
        }
    }

    private func message(_ session: Session, _ body: [String: Any], jsep: [String: Any]? = nil) throws(PublishingError) -> [String: Any] {
        var extra: [String: Any] = ["body": body]
        if let jsep { extra["jsep"] = jsep }
        return try post("\(options.url)/\(session.id)/\(session.handle)", "message", extra)
    }

    /// POSTs one request; HTTP errors carry status and body, Janus errors their code.
    func post(_ url: String, _ verb: String, _ extra: [String: Any] = [:]) throws(PublishingError) -> [String: Any] {
        let transaction = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        let response = try http.request("POST", url, headers: ["Content-Type: application/json"], body: JanusMessage.request(verb, transaction: transaction, extra))
        guard response.status == 200 else { throw Self.status("POST", response) }
        return try JanusMessage.reply(response.body)
    }

    static func status(_ method: String, _ response: HTTPClientResponse) -> PublishingError {
        .httpStatus(method: method, url: response.url, status: response.status, body: response.bodyText())
    }
}
