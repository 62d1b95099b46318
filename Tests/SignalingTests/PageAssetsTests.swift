import ScreencastSupport
import Signaling
import XCTest

/// What the page needs besides itself: its icon (browsers ask for /favicon.ico; no 404) and the call's frame rate
/// for the overlay.
final class PageAssetsTests: XCTestCase {
    private let logger = Logger(component: "test", threshold: .error)

    private func router(fps: Double? = nil) -> HTTPRouter {
        HTTPRouter(routes: SignalingServer.routes(
            configuration: SignalingConfiguration(sourceFramesPerSecond: fps), sessions: FakeSessions(), stats: { .object([]) },
            logger: logger))
    }

    private func littleEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        (0..<count).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
    }

    func testFaviconIsA16x16IcoWithTheDrawnPixels() throws {
        let response = router().respond(to: HTTPRequest(method: "GET", path: "/favicon.ico", headers: [:], body: []))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["Content-Type"], "image/x-icon")
        let ico = response.body
        XCTAssertEqual(ico.count, 6 + 16 + 40 + 16 * 16 * 4 + 16 * 4)
        XCTAssertEqual(Array(ico[0..<6]), [0, 0, 1, 0, 1, 0], "ICONDIR: type icon, one image")
        XCTAssertEqual([Int(ico[6]), Int(ico[7])], [16, 16])
        XCTAssertEqual(littleEndian(ico, 14, 4), ico.count - 22, "image size")
        XCTAssertEqual(littleEndian(ico, 18, 4), 22, "image offset")
        XCTAssertEqual(littleEndian(ico, 22, 4), 40, "BITMAPINFOHEADER")
        XCTAssertEqual(littleEndian(ico, 26 + 4, 4), 32, "height counts colour and mask rows")
        XCTAssertEqual(littleEndian(ico, 22 + 14, 2), 32, "bits per pixel")
        // Pixels bottom-up, BGRA: (8, 8) is inside the blue screen, (0, 0) transparent, (1, 3) the frame.
        func pixel(_ column: Int, _ row: Int) -> [UInt8] {
            let offset = 62 + ((15 - row) * 16 + column) * 4
            return Array(ico[offset..<offset + 4])
        }
        XCTAssertEqual(pixel(8, 8), [0xFF, 0x90, 0x1E, 0xFF])
        XCTAssertEqual(pixel(0, 0), [0, 0, 0, 0])
        XCTAssertEqual(pixel(1, 3), [0xEE, 0xEE, 0xEE, 0xFF])
    }

    func testThePageCarriesTheCallsFrameRate() throws {
        // (No <link> for the icon: the page stays self-contained, and browsers ask for /favicon.ico by themselves.)
        let page = router(fps: 30).respond(to: HTTPRequest(method: "GET", path: "/", headers: [:], body: [])).bodyText
        XCTAssertTrue(page.contains(#"data-source-fps="30.0""#), "the call's --max-fps reaches the overlay")
        XCTAssertTrue(page.contains("only changes are sent"))
        XCTAssertTrue(page.contains(#"data-source-changes-only="yes""#), "the screen sends only changes")
        XCTAssertTrue(page.contains(#"document.body.dataset.sourceChangesOnly === "yes""#), "the hint needs it")
        XCTAssertFalse(ViewerPage.html(sourceFramesPerSecond: 30, sourceSendsOnlyChanges: false).contains(#"data-source-changes-only="yes""#))
        let unknown = router().respond(to: HTTPRequest(method: "GET", path: "/", headers: [:], body: [])).bodyText
        XCTAssertTrue(unknown.contains(#"data-source-fps="0""#))
    }
}

/// The page of a call that encrypts end to end: it says so, carries the salt (escaped) for the key
/// derivation, and has the decrypting worker and the key entry inline.
final class EncryptedPageTests: XCTestCase {
    func testThePageKnowsTheCallEncrypts() {
        let page = ViewerPage.html(sourceFramesPerSecond: 30, e2eeSalt: #"my "salt" <&>"#)
        XCTAssertTrue(page.contains(#"data-e2ee="on" data-e2ee-salt="my &quot;salt&quot; &lt;&amp;&gt;""#), "the salt, escaped")
        XCTAssertTrue(page.contains(#"data-source-fps="30.0""#))
        for needle in [
            "new RTCRtpScriptTransform(e2eeWorker(), { operation: \"decrypt\", kind: kind || \"video\" })", "createEncodedStreams()", "encodedInsertableStreams: true",
            "attachDecryptor(transceiver)", "showAtOnce(transceiver.receiver)", "location.hash", "end-to-end encrypted \\u2014 enter the key",
            "self.onrtctransform", "name: \"PBKDF2\", hash: \"SHA-256\"", "iterations: 100000", "additionalData: header", "parts.push(\"key \" + e2ee.counts.keyIndex)",
            "<span id=\"lock\" hidden title=\"end-to-end encrypted\"><svg viewBox=", "content: url(\"data:image/svg+xml,%3Csvg ",
            "URL.createObjectURL(new Blob([source]",
        ] {
            XCTAssertTrue(page.contains(needle), "page lacks \(needle)")
        }
        XCTAssertFalse(page.contains("1F512"), "no emoji lock: Debian's Chromium has no font for it")
        let plain = ViewerPage.html(sourceFramesPerSecond: 30)
        XCTAssertTrue(plain.contains(#"data-e2ee="off""#))
        XCTAssertFalse(plain.contains("data-e2ee-salt"))
    }

    /// The key is never part of what the page sends: the fragment stays in the browser, and nothing in the
    /// script puts it into a request.
    func testTheKeyIsNeverSent() {
        let page = ViewerPage.html
        XCTAssertNil(page.range(of: #"fetch\([^;]*(hash|passphrase|e2ee)"#, options: .regularExpression))
        XCTAssertNil(page.range(of: #"(sendBeacon|XMLHttpRequest|localStorage|sessionStorage)"#, options: .regularExpression))
    }
}
