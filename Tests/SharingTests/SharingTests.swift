import Foundation
import ScreencastSupport
@testable import Sharing
import Signaling
import Synchronization
import TestSupport
import DTLS
import ICE
import PeerConnection
import SDP
import XCTest

/// The encoder follows the lowest viewer's REMB estimate, clamped to the configured range.
final class BitrateFollowerTests: XCTestCase {
    /// A viewer whose feedback stopped (its browser closed without pagehide) holds the bitrate only until
    /// `silenceLimitMicros` of silence: then the others' estimates decide; heard again, it counts again.
    func testASilentViewerStopsHoldingTheBitrateAtTheLimit() {
        let limit = BitrateFollower.defaultSilenceLimitMicros
        XCTAssertEqual(limit, 3_000_000)
        var follower = BitrateFollower(minimumKbps: 100)
        let t0: UInt64 = 50_000_000
        XCTAssertEqual(follower.update(peer: "live", bitsPerSecond: 2_000_000, ceilingKbps: 3000, nowMicros: t0), .set(2000))
        XCTAssertEqual(follower.update(peer: "dead", bitsPerSecond: 400_000, ceilingKbps: 3000, nowMicros: t0), .set(400))
        // "live" keeps sending feedback; "dead" is heard for the last time at t0 + 1 s.
        XCTAssertNil(follower.heard(peer: "dead", nowMicros: t0 + 1_000_000, ceilingKbps: 3000))
        for step in 1...7 {
            let now = t0 + UInt64(step) * 500_000
            XCTAssertNil(follower.heard(peer: "live", nowMicros: now, ceilingKbps: 3000))
            XCTAssertNil(follower.checkSilence(nowMicros: now, ceilingKbps: 3000), "step \(step): under the limit, dead still counts")
        }
        XCTAssertEqual(follower.lowestEstimateKbps, 400)
        XCTAssertNil(follower.checkSilence(nowMicros: t0 + 1_000_000 + limit - 1, ceilingKbps: 3000), "1 µs before the limit")
        XCTAssertNil(follower.heard(peer: "live", nowMicros: t0 + 1_000_000 + limit, ceilingKbps: 3000))
        XCTAssertEqual(follower.checkSilence(nowMicros: t0 + 1_000_000 + limit, ceilingKbps: 3000), .set(2000), "at the limit: the live viewer decides")
        XCTAssertEqual(follower.silentPeers, ["dead"])
        XCTAssertEqual(follower.lowestEstimateKbps, 2000)
        XCTAssertNil(follower.checkSilence(nowMicros: t0 + 5_000_000, ceilingKbps: 3000), "no change, no decision")
        XCTAssertEqual(follower.heard(peer: "dead", nowMicros: t0 + 6_000_000, ceilingKbps: 3000), .set(400), "heard again: it counts")
        XCTAssertEqual(follower.silentPeers, [])
        // Both silent ("live" since t0 + 4 s, "dead" since t0 + 6 s): nothing counts, so the default (the ceiling).
        XCTAssertEqual(follower.checkSilence(nowMicros: t0 + 6_000_000 + limit, ceilingKbps: 3000), .useDefault)
        XCTAssertEqual(follower.silentPeers, ["dead", "live"])
        XCTAssertEqual(follower.update(peer: "live", bitsPerSecond: 1_500_000, ceilingKbps: 3000, nowMicros: t0 + 20_000_000), .set(1500),
                       "a new estimate is feedback too")
        XCTAssertNil(follower.heard(peer: "nobody", nowMicros: t0, ceilingKbps: 3000))

        // Our own GCC target for a viewer moves without its feedback: it is no sign of life.
        var gcc = BitrateFollower(minimumKbps: 100)
        XCTAssertEqual(gcc.update(peer: "g", bitsPerSecond: 500_000, ceilingKbps: 3000, source: .congestionControl, nowMicros: t0), .set(500))
        XCTAssertNil(gcc.update(peer: "g", bitsPerSecond: 480_000, ceilingKbps: 3000, source: .congestionControl, nowMicros: t0 + limit - 1))
        XCTAssertEqual(gcc.checkSilence(nowMicros: t0 + limit, ceilingKbps: 3000), .useDefault, "silent since t0, its target changes or not")
        XCTAssertNil(gcc.update(peer: "g", bitsPerSecond: 300_000, ceilingKbps: 3000, source: .congestionControl, nowMicros: t0 + limit + 1),
                     "a silent viewer's new target does not count")
        XCTAssertEqual(gcc.silentPeers, ["g"])
        XCTAssertEqual(gcc.update(peer: "g", bitsPerSecond: 900_000, ceilingKbps: 3000, source: .remb, nowMicros: t0 + limit + 2), .set(300),
                       "its REMB is feedback: heard again, its GCC target counts")
    }

    func testLowestEstimateClampedToTheRange() {
        var follower = BitrateFollower(minimumKbps: 300)
        XCTAssertEqual(follower.update(peer: "a", bitsPerSecond: 1_200_000, ceilingKbps: 2000), .set(1200))
        XCTAssertEqual(follower.update(peer: "b", bitsPerSecond: 800_000, ceilingKbps: 2000), .set(800), "the lowest viewer wins")
        XCTAssertNil(follower.update(peer: "b", bitsPerSecond: 810_000, ceilingKbps: 2000), "a change under 5 % is skipped")
        XCTAssertEqual(follower.update(peer: "b", bitsPerSecond: 100_000, ceilingKbps: 2000), .set(300), "not below the minimum")
        XCTAssertNil(follower.update(peer: "b", bitsPerSecond: 50_000, ceilingKbps: 2000))
        XCTAssertEqual(follower.remove(peer: "b", ceilingKbps: 2000), .set(1200), "b left: a's estimate counts")
        XCTAssertEqual(follower.update(peer: "a", bitsPerSecond: 9_000_000, ceilingKbps: 2000), .useDefault, "at the ceiling: the default")
        XCTAssertNil(follower.remove(peer: "nobody", ceilingKbps: 2000))
        XCTAssertEqual(follower.update(peer: "a", bitsPerSecond: 500_000, ceilingKbps: 2000), .set(500))
        XCTAssertEqual(follower.remove(peer: "a", ceilingKbps: 2000), .useDefault, "no estimates left")
        XCTAssertNil(follower.lowestEstimateKbps)
    }

    /// GCC viewers far below the highest estimate do not drag the encoder down (their frames are thinned);
    /// REMB-only viewers always count; a GCC peer's REMB is ignored.
    func testOneSlowViewerDoesNotDragTheRestDown() {
        var follower = BitrateFollower(minimumKbps: 100)
        XCTAssertEqual(follower.update(peer: "fast", bitsPerSecond: 2_000_000, ceilingKbps: 3000, source: .congestionControl), .set(2000))
        XCTAssertNil(follower.update(peer: "slow", bitsPerSecond: 450_000, ceilingKbps: 3000, source: .congestionControl),
                     "450 < 0.5 x 2000: the encoder keeps the fast viewer's rate")
        XCTAssertEqual(follower.outliers, ["slow"])
        XCTAssertEqual(follower.lowestEstimateKbps, 2000)
        XCTAssertEqual(follower.update(peer: "slow", bitsPerSecond: 1_200_000, ceilingKbps: 3000, source: .congestionControl), .set(1200),
                       "within half of the highest it counts again")
        XCTAssertEqual(follower.outliers, [])
        XCTAssertNil(follower.update(peer: "slow", bitsPerSecond: 300_000, ceilingKbps: 3000, source: .remb),
                     "a GCC peer's REMB is only a ceiling of its target")
        XCTAssertEqual(follower.update(peer: "slow", bitsPerSecond: 1_100_000, ceilingKbps: 3000, source: .congestionControl), .set(1100))
        XCTAssertEqual(follower.update(peer: "aiortc", bitsPerSecond: 400_000, ceilingKbps: 3000), .set(400),
                       "a REMB-only viewer is never thinned, so it counts however low")
        XCTAssertEqual(follower.outliers, [])
        XCTAssertEqual(follower.remove(peer: "aiortc", ceilingKbps: 3000), .set(1100))
        var everyone = BitrateFollower(minimumKbps: 100, outlierRatio: 0)
        _ = everyone.update(peer: "fast", bitsPerSecond: 2_000_000, ceilingKbps: 3000, source: .congestionControl)
        XCTAssertEqual(everyone.update(peer: "slow", bitsPerSecond: 450_000, ceilingKbps: 3000, source: .congestionControl), .set(450),
                       "ratio 0: the lowest viewer wins, as with REMB")
    }

    /// An SFU's cap (its REMB) bounds the encoder without estimates, is no estimate to be an outlier
    /// against, and the lowest of several wins; removing it restores what the estimates say.
    func testACeilingBoundsTheEncoderAndIsNoEstimate() {
        var follower = BitrateFollower(minimumKbps: 150)
        XCTAssertEqual(follower.setCeiling("sfu", bitsPerSecond: 250_000, ceilingKbps: 2000), .set(250), "a cap alone applies")
        XCTAssertEqual(follower.update(peer: "sfu-gcc", bitsPerSecond: 346_000, ceilingKbps: 2000, source: .congestionControl), nil,
                       "a target above the cap: the cap stays")
        XCTAssertEqual(follower.update(peer: "sfu-gcc", bitsPerSecond: 200_000, ceilingKbps: 2000, source: .congestionControl), .set(200),
                       "a target under the cap counts (the cap is not the highest estimate that would make it an outlier)")
        XCTAssertEqual(follower.outliers, [])
        XCTAssertEqual(follower.update(peer: "viewer", bitsPerSecond: 1_500_000, ceilingKbps: 2000), .set(250),
                       "a fast REMB viewer makes the GCC target an outlier (its frames are thinned); the cap holds")
        XCTAssertEqual(follower.outliers, ["sfu-gcc"])
        XCTAssertNil(follower.remove(peer: "sfu-gcc", ceilingKbps: 2000), "the target gone, the cap still bounds the fast viewer")
        XCTAssertEqual(follower.setCeiling("other", bitsPerSecond: 100_000, ceilingKbps: 2000), .set(150), "the lowest cap, not below the minimum")
        XCTAssertEqual(follower.lowestCeilingKbps, 100)
        XCTAssertEqual(follower.setCeiling("other", bitsPerSecond: nil, ceilingKbps: 2000), .set(250))
        XCTAssertEqual(follower.setCeiling("sfu", bitsPerSecond: 5_000_000, ceilingKbps: 2000), .set(1500), "a cap above the viewer's estimate")
        XCTAssertEqual(follower.remove(peer: "viewer", ceilingKbps: 2000), .useDefault, "a cap above the configured rate: the default")
    }
}

/// ``ViewerHub`` refusals that happen before any socket is opened.
final class ViewerHubRefusalTests: XCTestCase {
    final class Encoder: SharedEncoderControl {
        let calls = Mutex<[String]>([])
        func requestKeyframe() { calls.withLock { $0.append("keyframe") } }
        func setBitrate(kbps: Int?) { calls.withLock { $0.append("bitrate \(kbps.map(String.init) ?? "default")") } }
        func setDroppableCadence(period: Int?) { calls.withLock { $0.append("cadence \(period.map(String.init) ?? "off")") } }
    }

    func hub(maxViewers: Int = 4) throws -> ViewerHub {
        try ViewerHub(
            configuration: SharingConfiguration(ice: .init(role: .controlled, localAddresses: ["127.0.0.1"]), maxViewers: maxViewers),
            encoder: Encoder(), logger: Logger(component: "test", threshold: .error))
    }

    func status(_ body: () throws(SignalingError) -> WHEPSession) -> Int {
        do {
            _ = try body()
            return 201
        } catch {
            return error.httpStatus
        }
    }

    func testMalformedAndUnanswerableOffersAreRefused() throws {
        let hub = try hub()
        XCTAssertEqual(status { () throws(SignalingError) in try hub.createSession(offer: "v=0\r\nnonsense\r\n") }, 400)
        let noVideo = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\n"
            + "a=rtpmap:111 opus/48000/2\r\na=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdefghijkl\r\na=rtcp-mux\r\n"
            + "a=fingerprint:sha-256 \((0..<32).map { _ in "AB" }.joined(separator: ":"))\r\na=setup:actpass\r\n"
        XCTAssertEqual(status { () throws(SignalingError) in try hub.createSession(offer: noVideo) }, 422)
        XCTAssertEqual(hub.viewerCount, 0)
        XCTAssertThrowsError(try hub.updateSession(id: "nope", fragment: "a=end-of-candidates\r\n")) { error in
            XCTAssertEqual((error as? SignalingError)?.httpStatus, 404)
        }
        XCTAssertFalse(hub.deleteSession(id: "nope"))
    }

    /// What the WebRTC layer says becomes a WHEP status: the description's fault 4xx, ours 500.
    func testPeerConnectionErrorsBecomeWHEPStatuses() {
        XCTAssertEqual(SignalingError(SDPError.offerHasNoVP8Video).httpStatus, 422)
        XCTAssertEqual(SignalingError(SDPError.offerWithoutFingerprint).httpStatus, 422)
        XCTAssertEqual(SignalingError(SDPError.notText).httpStatus, 400)
        XCTAssertEqual(SignalingError(SDPError.badLine(line: 1, text: "x", reason: "y")).httpStatus, 400)
        XCTAssertEqual(SignalingError(SDPError.badAttribute(line: 3, name: "candidate", reason: "y")).httpStatus, 400)
        XCTAssertEqual(SignalingError(SDPError.tooLarge(bytes: 2, limit: 1)).httpStatus, 413)
        XCTAssertEqual(SignalingError(SDPError.tooManyCandidates(count: 2_000, limit: 256)).httpStatus, 413)
        XCTAssertEqual(SignalingError(SDPError.invalidConfiguration("no cert")).httpStatus, 500)
        XCTAssertEqual(SignalingError(.ice(.badRemoteCandidate("candidate:x", reason: "libnice"))).httpStatus, 422)
        XCTAssertEqual(SignalingError(.ice(.gatheringFailed(reason: "no address"))).httpStatus, 500)
        XCTAssertEqual(SignalingError(.dtls(.certificate("RAND_bytes"))).httpStatus, 500)
        XCTAssertEqual(SignalingError(PeerConnectionError.invalidConfiguration("RTP sender")).httpStatus, 500)
        XCTAssertEqual(
            SignalingError(SDPError.offerHasNoVP8Video), .refused(.unanswerable, reason: "the offer has no video m-line with VP8"))
        XCTAssertEqual(
            SignalingError(.ice(.gatheringFailed(reason: "no address"))),
            .internalFailure("ICE candidate gathering failed: no address"))
    }

    func testFullOrEndedCallAnswers503() throws {
        let full = try hub(maxViewers: 0)
        XCTAssertEqual(status { () throws(SignalingError) in try full.createSession(offer: "v=0\r\n") }, 503)
        let ended = try hub()
        ended.closeAll(reason: "test")
        XCTAssertEqual(status { () throws(SignalingError) in try ended.createSession(offer: "v=0\r\n") }, 503)
        guard case .object(let fields) = ended.json else { return XCTFail("stats are an object") }
        XCTAssertEqual(fields.first { $0.0 == "refused" }?.1, .int(1))
    }
}

/// Sessions pending ICE: each holds a viewer slot (so their count is bounded by `maxViewers`) until it
/// connects or its ``ICEAgent/Configuration/connectTimeLimit`` ends it, freeing the slot.
final class ViewerHubPendingSessionTests: XCTestCase {
    func testSessionsThatNeverConnectAreEndedAtTheirTimeLimitAndFreeTheirSlots() throws {
        // aiortc's offer names 192.168.1.20 and fd00:1234:5678::20: a hub bound to loopback refuses both
        // candidates, and nobody sends it checks, so these sessions never connect.
        let offer = try SDPFixture.text("aiortc-offer.sdp")
        let ice = ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], connectTimeLimit: .milliseconds(1500))
        let hub = try ViewerHub(
            configuration: SharingConfiguration(ice: ice, maxViewers: 2),
            encoder: ViewerHubRefusalTests.Encoder(), logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        let first = try hub.createSession(offer: offer)
        _ = try hub.createSession(offer: offer)
        XCTAssertThrowsError(try hub.createSession(offer: offer)) { error in
            XCTAssertEqual((error as? SignalingError)?.httpStatus, 503, "a third pending session past maxViewers")
        }
        XCTAssertEqual(hub.viewerCount, 2)
        let started = Date()
        while hub.viewerCount > 0, Date().timeIntervalSince(started) < 10 { usleep(20_000) }
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(hub.viewerCount, 0, "pending sessions outlived their time limit")
        XCTAssertGreaterThan(waited, 1.0, "ended before the time limit")
        guard case .object(let fields) = hub.json, case .array(let ended)? = fields.first(where: { $0.0 == "ended" })?.1 else {
            return XCTFail("no ended list")
        }
        XCTAssertEqual(ended.count, 2)
        XCTAssertTrue(ended.allSatisfy { "\($0)".contains("ICE neverConnected") }, "\(ended)")
        XCTAssertTrue("\(ended)".contains(first.id))
        // The slots are free again.
        XCTAssertNoThrow(try hub.createSession(offer: offer))
    }

    /// A whole office behind one NAT joins at once: 6 sessions from one address all take slots while slots are
    /// free (maxPendingPerAddress 2 does not cap them then). The call full, a newcomer from another (or an
    /// unknown) address takes the slot of that address's oldest unconnected session; a newcomer from the address
    /// holding the most gets 429; once it is down to its share, 503. (A break-it trial kept all 16 slots with 16
    /// offers it never connected.)
    func testOneAddressMayFillFreeSlotsButGivesThemUpToOthersWhenFull() throws {
        let offer = try SDPFixture.text("aiortc-offer.sdp")
        let ice = ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], connectTimeLimit: .milliseconds(1500))
        var configuration = SharingConfiguration(ice: ice, maxViewers: 6)
        configuration.maxPendingPerAddress = 2
        let hub = try ViewerHub(configuration: configuration, encoder: ViewerHubRefusalTests.Encoder(), logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        let office = try (0..<6).map { _ in try hub.createSession(offer: offer, clientAddress: "192.0.2.7") }
        XCTAssertEqual(hub.viewerCount, 6, "every free slot taken by one address")
        XCTAssertThrowsError(try hub.createSession(offer: offer, clientAddress: "192.0.2.7")) { error in
            XCTAssertEqual(error as? SignalingError, .tooManyPending("the call is full and 6 sessions from 192.0.2.7 have not connected yet"))
            XCTAssertEqual((error as? SignalingError)?.httpStatus, 429)
        }
        // Four newcomers from elsewhere (one of unknown address) take the slots of the office's four oldest; then
        // it is down to its share.
        XCTAssertNoThrow(try hub.createSession(offer: offer), "a newcomer of unknown address")
        for index in 0..<3 {
            XCTAssertNoThrow(try hub.createSession(offer: offer, clientAddress: "192.0.2.\(20 + index)"), "newcomer \(index)")
        }
        XCTAssertThrowsError(try hub.createSession(offer: offer, clientAddress: "192.0.2.30")) { error in
            XCTAssertEqual((error as? SignalingError)?.httpStatus, 503, "the office keeps its share of 2")
        }
        XCTAssertEqual(hub.viewerCount, 6)
        guard case .object(let fields) = hub.json else { return XCTFail("stats are an object") }
        XCTAssertEqual(fields.first { $0.0 == "givenUp" }?.1, .int(4))
        XCTAssertEqual(fields.first { $0.0 == "refused" }?.1, .int(2))
        // The four given up are ended (the oldest), the two newest remain.
        let started = Date()
        var endedIDs: [String] = []
        while Date().timeIntervalSince(started) < 5 {
            if case .object(let fields) = hub.json, case .array(let ended)? = fields.first(where: { $0.0 == "ended" })?.1 {
                endedIDs = office.map(\.id).filter { id in ended.contains { "\($0)".contains(id) } }
                if endedIDs.count >= 4 { break }
            }
            usleep(20_000)
        }
        XCTAssertEqual(Set(endedIDs), Set(office.prefix(4).map(\.id)), "the office's four oldest gave their slots up")
        XCTAssertFalse(hub.deleteSession(id: office[0].id), "a session given up is gone")
        XCTAssertTrue(hub.deleteSession(id: office[5].id))
    }
}

/// A call of 2 viewers: one client's two offers it never connects give a slot up to a newcomer (the fair share is
/// at most half the slots), where every other address got 503 for 30 s.
final class SmallCallFairShareTests: XCTestCase {
    func testTwoUnconnectedOffersOfOneClientDoNotHoldBothSlots() throws {
        XCTAssertEqual(SharingConfiguration(maxViewers: 2).pendingFairShare, 1)
        XCTAssertEqual(SharingConfiguration(maxViewers: 16).pendingFairShare, 4)
        XCTAssertEqual(SharingConfiguration(maxViewers: 1).pendingFairShare, 1)
        let offer = try SDPFixture.text("aiortc-offer.sdp")
        let ice = ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], connectTimeLimit: .milliseconds(3000))
        let hub = try ViewerHub(
            configuration: SharingConfiguration(ice: ice, maxViewers: 2), encoder: ViewerHubRefusalTests.Encoder(),
            logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        _ = try hub.createSession(offer: offer, clientAddress: "192.0.2.7")
        _ = try hub.createSession(offer: offer, clientAddress: "192.0.2.7")
        XCTAssertNoThrow(try hub.createSession(offer: offer, clientAddress: "192.0.2.8"), "a newcomer takes the hog's oldest slot")
        XCTAssertThrowsError(try hub.createSession(offer: offer, clientAddress: "192.0.2.7")) { error in
            XCTAssertEqual((error as? SignalingError)?.httpStatus, 503, "down to its share of 1, the call full")
        }
    }
}

/// Which unconnected session gives its slot up when the call is full (sans-I/O).
final class PendingSessionsTests: XCTestCase {
    func testTheOldestOfTheHeaviestAddressOverItsShareGivesUp() {
        var pending = PendingSessions(fairShare: 2)
        XCTAssertNil(pending.sessionToGiveUp(forNewcomerFrom: "b"), "nobody pending")
        pending.add("a1", address: "a", nowMicros: 30)
        pending.add("a2", address: "a", nowMicros: 10)
        XCTAssertNil(pending.sessionToGiveUp(forNewcomerFrom: "b"), "a holds its share, not more")
        pending.add("a3", address: "a", nowMicros: 20)
        pending.add("c1", address: "c", nowMicros: 0)
        XCTAssertEqual(pending.sessionToGiveUp(forNewcomerFrom: "b"), "a2", "the oldest of the address over its share")
        XCTAssertEqual(pending.sessionToGiveUp(forNewcomerFrom: nil), "a2")
        XCTAssertNil(pending.sessionToGiveUp(forNewcomerFrom: "a"), "never for a newcomer of the same address")
        XCTAssertEqual(pending.count(from: "a"), 3)
        pending.remove("a2")
        XCTAssertNil(pending.sessionToGiveUp(forNewcomerFrom: "b"))
        for index in 0..<3 { pending.add("d\(index)", address: "d", nowMicros: UInt64(100 + index)) }
        for index in 0..<3 { pending.add("e\(index)", address: "e", nowMicros: UInt64(50 + index)) }
        XCTAssertEqual(pending.sessionToGiveUp(forNewcomerFrom: "b"), "d0", "a tie goes by address, not dictionary order")
    }
}

/// The SFU leg's congestion target sets the shared encoder's rate only while the leg is heard
/// (``ViewerHub/consumerHeard(_:)``): an SFU that died or a cut path sends no feedback, the leg's GCC lowers
/// its target on timers, and once ``BitrateFollower/silenceLimitMicros`` passed without RTCP the encoder goes
/// back to what the others say (here: nobody, so the default). Real timer (the hub checks every 0.5 s).
final class ViewerHubConsumerSilenceTests: XCTestCase {
    func testASilentSFULegStopsSettingTheEncodersRateAndCountsAgainWhenHeard() throws {
        let encoder = ViewerHubRefusalTests.Encoder()
        let hub = try ViewerHub(
            configuration: SharingConfiguration(
                ice: .init(role: .controlled, localAddresses: ["127.0.0.1"]), maxViewers: 1, configuredBitrateKbps: 2000),
            encoder: encoder, logger: Logger(component: "test", threshold: .error))
        defer { hub.closeAll(reason: "test over") }
        func calls() -> [String] { encoder.calls.withLock { $0 } }
        hub.consumerEstimate("sfu", bitsPerSecond: 400_000, source: .congestionControl)
        XCTAssertEqual(calls(), ["bitrate 400"], "the leg's target sets the encoder")

        // Heard every 250 ms for 4 s (longer than the 3 s silence limit): the target keeps counting.
        let start = MonotonicClock.nowMicros()
        while MonotonicClock.nowMicros() - start < 4_000_000 {
            hub.consumerHeard("sfu")
            usleep(250_000)
        }
        XCTAssertEqual(calls(), ["bitrate 400"], "a leg that is heard is never silent")

        // Feedback stops; the dying leg's target keeps falling (GCC's feedback timeout: × 0.8 a second).
        let silentFrom = MonotonicClock.nowMicros()
        hub.consumerEstimate("sfu", bitsPerSecond: 320_000, source: .congestionControl)
        XCTAssertEqual(calls().last, "bitrate 320", "while not yet silent the falling target still counts")
        while !calls().contains("bitrate default"), MonotonicClock.nowMicros() - silentFrom < 15_000_000 { usleep(50_000) }
        let silencedAfter = MonotonicClock.nowMicros() - silentFrom
        XCTAssertEqual(calls().last, "bitrate default", "silent: the encoder is back to its configured rate")
        XCTAssertGreaterThanOrEqual(silencedAfter, BitrateFollower.defaultSilenceLimitMicros - 300_000,
                                    "not before the silence limit (heard last at most 250 ms before the target)")
        guard case .object(let fields) = hub.json, case .object(let bitrate)? = fields.first(where: { $0.0 == "bitrate" })?.1 else {
            return XCTFail("viewers.bitrate in the stats")
        }
        XCTAssertEqual(bitrate.first { $0.0 == "silentPeers" }?.1, .array([.string("sfu")]))
        XCTAssertEqual(bitrate.first { $0.0 == "applied" }?.1, .string("default"))
        hub.consumerEstimate("sfu", bitsPerSecond: 100_000, source: .congestionControl)
        XCTAssertEqual(calls().last, "bitrate default", "a silent leg's new target does not count")

        // Heard again (the path came back): its current target counts at once.
        hub.consumerHeard("sfu")
        XCTAssertEqual(calls().last, "bitrate 150", "heard: the latest target (100 kbit/s) counts, at the 150 kbit/s floor")
        // The leg ends: its estimate goes, and with it the encoder's only bound.
        hub.consumerEstimate("sfu", bitsPerSecond: nil, source: .congestionControl)
        XCTAssertEqual(calls().last, "bitrate default")
    }
}
