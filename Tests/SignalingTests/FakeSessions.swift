import Foundation
import Signaling
import Synchronization
import SDP
import Sharing

/// A WHEPSessionProvider that records every call and answers with canned SDP. It parses offers with the
/// real SDP parser, so malformed ones fail as they would in production; an offer without VP8 gets
/// `offerHasNoVP8Video`; `s=full` → 503, `s=explode` → 500. `delay` makes createSession slow.
final class FakeSessions: WHEPSessionProvider {
    enum Call: Equatable, Sendable {
        case create(String)
        case update(id: String, fragment: String)
        case delete(String)
    }

    static let answer = """
        v=0\r
        o=- 1 2 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        m=video 9 UDP/TLS/RTP/SAVPF 96\r
        c=IN IP4 0.0.0.0\r
        a=sendonly\r
        a=rtpmap:96 VP8/90000\r

        """

    let delay: Duration
    let restartAnswer: String?
    private let state = Mutex<(calls: [Call], live: Set<String>, next: Int)>(([], [], 1))

    init(delay: Duration = .zero, restartAnswer: String? = nil) {
        self.delay = delay
        self.restartAnswer = restartAnswer
    }

    var calls: [Call] { state.withLock { $0.calls } }
    /// The client address each WHEP POST came from, in order.
    var clientAddresses: [String?] { addresses.withLock { $0 } }
    private let addresses = Mutex<[String?]>([])

    func createSession(offer: String, clientAddress: String?) throws(SignalingError) -> WHEPSession {
        addresses.withLock { $0.append(clientAddress) }
        return try createSession(offer: offer)
    }
    var liveSessions: Set<String> { state.withLock { $0.live } }

    func createSession(offer: String) throws(SignalingError) -> WHEPSession {
        state.withLock { $0.calls.append(.create(offer)) }
        if delay > .zero { Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18) }
        let description: SessionDescription
        do { description = try SDPParser().parse(offer) } catch { throw SignalingError(error) }
        if description.sessionName == "full" { throw .unavailable("viewer limit of 4 reached") }
        if description.sessionName == "explode" { throw .internalFailure("ICE agent did not start") }
        guard description.media.contains(where: { $0.kind == "video" && $0.rtpMaps.contains { $0.encodingName.uppercased() == "VP8" } })
        else { throw SignalingError(SDPError.offerHasNoVP8Video) }
        let id = state.withLock { state -> String in
            let id = "s\(state.next)"
            state.next += 1
            state.live.insert(id)
            return id
        }
        return WHEPSession(id: id, answer: Self.answer)
    }

    func updateSession(id: String, fragment: String) throws(SignalingError) -> String? {
        let known = state.withLock { state -> Bool in
            state.calls.append(.update(id: id, fragment: fragment))
            return state.live.contains(id)
        }
        guard known else { throw .unknownSession(id) }
        return fragment.contains("a=ice-ufrag:") ? restartAnswer : nil
    }

    func deleteSession(id: String) -> Bool {
        state.withLock { state in
            state.calls.append(.delete(id))
            return state.live.remove(id) != nil
        }
    }
}

/// Offers for the tests (CRLF line ends as browsers send them).
enum Offers {
    /// A recvonly VP8 offer shaped like Chromium's WHEP offer (trimmed).
    static let vp8 = lines([
        "v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
        "a=msid-semantic: WMS", "m=video 9 UDP/TLS/RTP/SAVPF 96 97", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
        "a=ice-ufrag:abcd", "a=ice-pwd:0123456789abcdefghijklmn", "a=ice-options:trickle",
        "a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF",
        "a=setup:actpass", "a=mid:0", "a=recvonly", "a=rtcp-mux", "a=rtcp-rsize", "a=rtpmap:96 VP8/90000",
        "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
    ])

    /// Well-formed, but only H.264.
    static let h264Only = vp8.replacingOccurrences(of: "VP8/90000", with: "H264/90000")
    static let full = vp8.replacingOccurrences(of: "s=-", with: "s=full")
    static let explode = vp8.replacingOccurrences(of: "s=-", with: "s=explode")
    static let garbage = "this is not SDP\r\n"

    static let trickle = lines(["a=ice-ufrag:abcd", "a=ice-pwd:0123456789abcdefghijklmn", "m=video 9 UDP/TLS/RTP/SAVPF 0",
                                "a=mid:0", "a=candidate:1 1 udp 2113937151 127.0.0.1 50000 typ host"])
    static let candidateOnly = lines(["m=video 9 UDP/TLS/RTP/SAVPF 0", "a=mid:0", "a=candidate:1 1 udp 2113937151 127.0.0.1 50000 typ host"])

    static func lines(_ lines: [String]) -> String { lines.map { $0 + "\r\n" }.joined() }
}
