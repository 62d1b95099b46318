@testable import Sharing
import ScreencastSupport
import Signaling
import TestSupport
import XCTest

/// Each viewer's keyframe requests reach the shared encoder spaced: at once after a quiet time, ever more
/// rarely (1 → 4 → 16 s) while keyframes do not help, at least 4 s apart for a thinned viewer.
final class ViewerKeyframeGateTests: XCTestCase {
    private func passed(_ gate: inout ViewerKeyframeGate, peer: String, outlier: Bool = false, at times: some Sequence<UInt64>) -> [UInt64] {
        times.filter { gate.admit(peer: peer, isOutlier: outlier, nowMicros: $0) }
    }

    private func seconds(_ values: [UInt64]) -> [UInt64] { values.map { $0 / 1_000_000 } }

    /// A viewer that cannot decode (no key) asks every second for a minute: 6 keyframes instead of 60, one per
    /// 16 s at the end; a viewer beside it whose losses are seconds apart is never held.
    func testAViewerThatKeepsAskingIsBoundedAndOthersAreNot() {
        var gate = ViewerKeyframeGate()
        let everySecond = stride(from: UInt64(0), to: 60_000_000, by: 1_000_000)
        XCTAssertEqual(seconds(passed(&gate, peer: "keyless", at: everySecond)), [0, 1, 5, 21, 37, 53])
        XCTAssertEqual(gate.spacingMicros(of: "keyless"), ViewerKeyframeGate.maximumSpacingMicros)
        XCTAssertEqual(gate.held, 54)
        XCTAssertEqual(gate.heldFromOutliers, 0)
        let lossesApart = stride(from: UInt64(3_000_000), to: 60_000_000, by: 3_000_000)
        XCTAssertEqual(passed(&gate, peer: "keyed", at: lossesApart).count, 19, "each loss 3 s apart gets its keyframe")
        XCTAssertEqual(gate.spacingMicros(of: "keyed"), ViewerKeyframeGate.baseSpacingMicros)
        XCTAssertEqual(gate.held, 54, "the keyed viewer's requests were never held")
    }

    /// Chromium asks several times a second while it cannot decode: still 1, then 4, then 16 s apart.
    func testRequestsFasterThanTheSpacingDoNotShortenIt() {
        var gate = ViewerKeyframeGate()
        let fast = stride(from: UInt64(0), to: 30_000_000, by: 200_000)
        XCTAssertEqual(passed(&gate, peer: "p", at: fast).map { $0 / 100_000 }, [0, 10, 50, 210])
    }

    /// Once the viewer decodes again (a key typed in) it stops asking; its next request, after a quiet time, is a
    /// new loss and passes at once with the spacing back at 1 s.
    func testAQuietTimeResetsTheSpacing() {
        var gate = ViewerKeyframeGate()
        _ = passed(&gate, peer: "p", at: stride(from: UInt64(0), to: 22_000_000, by: 1_000_000))
        XCTAssertEqual(gate.spacingMicros(of: "p"), ViewerKeyframeGate.maximumSpacingMicros)
        // Last passed at 21 s; quiet until 40 s.
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 40_000_000))
        XCTAssertEqual(gate.spacingMicros(of: "p"), ViewerKeyframeGate.baseSpacingMicros)
        XCTAssertFalse(gate.admit(peer: "p", isOutlier: false, nowMicros: 40_500_000), "within the base spacing")
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 45_000_000), "a loss 5 s later: the keyframe helped")
        XCTAssertEqual(gate.spacingMicros(of: "p"), ViewerKeyframeGate.baseSpacingMicros)
    }

    /// A request 1.5 s after the last keyframe passed says it did not help, even with none held between.
    func testAskingAgainSoonAfterAKeyframeGrowsTheSpacing() {
        var gate = ViewerKeyframeGate()
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 10_000_000))
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 11_500_000))
        XCTAssertEqual(gate.spacingMicros(of: "p"), 4_000_000)
        XCTAssertFalse(gate.admit(peer: "p", isOutlier: false, nowMicros: 15_000_000))
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 15_600_000))
    }

    /// A thinned viewer's lobby retries every second: passed at least 4 s apart; others pass meanwhile; a
    /// viewer that left and joined again starts afresh.
    func testOutliersAreSpacedAtLeastFourSeconds() {
        var gate = ViewerKeyframeGate()
        let retries = stride(from: UInt64(1_000_000), to: 11_000_000, by: 1_000_000)
        XCTAssertEqual(seconds(passed(&gate, peer: "slow", outlier: true, at: retries)), [1, 5])
        XCTAssertEqual(gate.heldFromOutliers, 8)
        XCTAssertEqual(gate.held, 8)
        XCTAssertTrue(gate.admit(peer: "other", isOutlier: true, nowMicros: 9_500_000), "each outlier has its own spacing")
        gate.remove(peer: "slow")
        XCTAssertNil(gate.spacingMicros(of: "slow"))
        XCTAssertTrue(gate.admit(peer: "slow", isOutlier: true, nowMicros: 9_600_000))
        XCTAssertEqual(gate.spacingMicros(of: "slow"), ViewerKeyframeGate.outlierSpacingMicros)
    }

    /// A clock that steps back (two threads' readings) holds the request rather than passing it early.
    func testATimeBeforeTheLastPassIsHeld() {
        var gate = ViewerKeyframeGate()
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 5_000_000))
        XCTAssertFalse(gate.admit(peer: "p", isOutlier: false, nowMicros: 4_999_000))
    }

    /// A page given the key says it can decode again: a keyframe at once and the base spacing, however long the
    /// spacing had grown; a second restart within 10 s is not honoured.
    func testARestartGivesAKeyframeAtOnceAtMostEveryTenSeconds() {
        var gate = ViewerKeyframeGate()
        _ = passed(&gate, peer: "p", at: stride(from: UInt64(0), to: 24_000_000, by: 1_000_000))
        XCTAssertEqual(gate.spacingMicros(of: "p"), ViewerKeyframeGate.maximumSpacingMicros)
        XCTAssertTrue(gate.restart(peer: "p", nowMicros: 24_000_000))
        XCTAssertEqual(gate.spacingMicros(of: "p"), ViewerKeyframeGate.baseSpacingMicros)
        XCTAssertTrue(gate.admit(peer: "p", isOutlier: false, nowMicros: 25_000_000), "its next request after the base spacing")
        XCTAssertFalse(gate.restart(peer: "p", nowMicros: 30_000_000), "within 10 s of the last restart")
        XCTAssertTrue(gate.restart(peer: "p", nowMicros: 34_000_000))
        XCTAssertTrue(gate.restart(peer: "new", nowMicros: 1), "a viewer that never asked")
    }
}

/// `POST /whep/{id}` (a page that can decode again, e.g. given the key) through the real routes and hub: 204 and
/// a keyframe asked of the encoder at once, 429 within 10 s, 404 for no such session, 401 without the token.
final class KeyframeWantedRouteTests: XCTestCase {
    func testThePagesHintAsksForOneKeyframeAtMostEveryTenSeconds() throws {
        let offer = try SDPFixture.text("aiortc-offer.sdp")
        let encoder = ViewerHubRefusalTests.Encoder()
        let hub = try ViewerHub(
            configuration: SharingConfiguration(ice: .init(role: .controlled, localAddresses: ["127.0.0.1"]), maxViewers: 2),
            encoder: encoder, logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        let token = try XCTUnwrap(BearerToken("a-token-of-the-share-0123456789ab"))
        let router = HTTPRouter(routes: SignalingServer.routes(
            configuration: SignalingConfiguration(token: token), sessions: hub, stats: { .null }, statsText: { "" },
            logger: Logger(component: "test", threshold: .error)))
        let session = try hub.createSession(offer: offer)
        let authorized: HTTPHeaders = ["Authorization": "Bearer a-token-of-the-share-0123456789ab"]
        func post(_ id: String, headers: HTTPHeaders = authorized) -> Int {
            router.respond(to: HTTPRequest(method: "POST", path: "/whep/" + id, headers: headers)).status
        }
        let before = encoder.calls.withLock { $0.filter { $0 == "keyframe" }.count }
        XCTAssertEqual(post(session.id, headers: [:]), 401)
        XCTAssertEqual(post(session.id), 204)
        XCTAssertEqual(encoder.calls.withLock { $0.filter { $0 == "keyframe" }.count }, before + 1, "a keyframe asked for at once")
        XCTAssertEqual(post(session.id), 429, "again within 10 s")
        XCTAssertEqual(encoder.calls.withLock { $0.filter { $0 == "keyframe" }.count }, before + 1)
        XCTAssertEqual(post("no-such-session"), 404)
    }
}
