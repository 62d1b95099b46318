import ScreencastSupport
import Signaling
import XCTest

/// What the server repeats of a client's or a sender's input: a session id in a 404 at most
/// ``WHEPSessionID/maxEchoedCharacters`` long, the text stats with control bytes escaped, and a numeric
/// `--http` host that is no address refused as a usage error (bad-input review, small findings).
final class EchoedInputTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)

    private func router(statsText: String = "") -> HTTPRouter {
        HTTPRouter(routes: SignalingServer.routes(
            configuration: SignalingConfiguration(), sessions: FakeSessions(), stats: { .null }, statsText: { statsText }, logger: logger))
    }

    func testA5000CharacterSessionIDIsShortenedIn404s() {
        XCTAssertEqual(WHEPSessionID.maxEchoedCharacters, 64)
        let id = String(repeating: "a", count: 5_000)
        let deleted = router().respond(to: HTTPRequest(method: "DELETE", path: "/whep/" + id))
        XCTAssertEqual(deleted.status, 404)
        XCTAssertEqual(String(decoding: deleted.body, as: UTF8.self), "no session " + String(repeating: "a", count: 64) + "…\n")
        let patched = router().respond(to: HTTPRequest(
            method: "PATCH", path: "/whep/" + id, headers: ["Content-Type": "application/trickle-ice-sdpfrag"], body: Array(Offers.candidateOnly.utf8)))
        XCTAssertEqual(patched.status, 404)
        XCTAssertLessThan(patched.body.count, 100, String(decoding: patched.body, as: UTF8.self))
        // A short one is repeated whole.
        let short = router().respond(to: HTTPRequest(method: "DELETE", path: "/whep/nope"))
        XCTAssertEqual(String(decoding: short.body, as: UTF8.self), "no session nope\n")
        XCTAssertEqual(WHEPSessionID.echoed(String(repeating: "b", count: 64)), String(repeating: "b", count: 64))
        XCTAssertEqual(WHEPSessionID.echoed("a\u{1B}b"), "a\\u{1b}b")
    }

    /// An agent's `Capture-Rect` with ESC sequences, a CR and a C1 CSI: escaped, the summary's lines kept.
    func testTextStatsEscapeControlBytes() {
        let hostile = "frames 3\ncapture rect 0,0 \u{1B}[2J\u{1B}]0;owned\u{07}\r\u{9B}31m 10x10\nend"
        let response = router(statsText: hostile).respond(to: HTTPRequest(method: "GET", path: "/stats", query: ["format": "text"]))
        XCTAssertEqual(response.status, 200)
        let text = String(decoding: response.body, as: UTF8.self)
        XCTAssertEqual(text, "frames 3\ncapture rect 0,0 \\u{1b}[2J\\u{1b}]0;owned\\u{7}\\r\\u{9b}31m 10x10\nend")
        XCTAssertFalse(response.body.contains { $0 < 0x20 && $0 != 0x0A }, "no control byte but the line ends")
        XCTAssertEqual("tab\there é ✓".escapingNonPrintable, "tab\\there é ✓")
    }

    func testANumericHostThatIsNoAddressIsAnInvalidEndpoint() throws {
        for bad in ["256.0.0.1:80", "1.2.3:80", "1.2.3.4.5:80", "127.0.0.01234:80", "[zz]:80", "[::1::2]:80"] {
            XCTAssertThrowsError(try HTTPEndpoint(parsing: bad), bad) { error in
                guard case .invalidEndpoint(let text, _)? = error as? SignalingError else { return XCTFail("\(bad): \(error)") }
                XCTAssertEqual(text, bad)
            }
        }
        XCTAssertEqual(
            (try? HTTPEndpoint(parsing: "256.0.0.1:80")).map(\.description) ?? "refused", "refused")
        for good in ["0.0.0.0:0", "255.255.255.255:1", "127.0.0.2:8080", "[::]:8443", "[fe80::1%lo]:80", "localhost:9", "my-host.local:80"] {
            XCTAssertNoThrow(try HTTPEndpoint(parsing: good), good)
        }
    }
}
