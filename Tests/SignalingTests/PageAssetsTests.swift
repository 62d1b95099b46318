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
        let unknown = router().respond(to: HTTPRequest(method: "GET", path: "/", headers: [:], body: [])).bodyText
        XCTAssertTrue(unknown.contains(#"data-source-fps="0""#))
    }
}
