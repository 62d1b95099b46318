@testable import Sharing
import XCTest

/// ``ViewerHubStateMachine`` driven without peers: the peer handles are strings, the clock is passed in, and
/// every decision shows as the actions it returns.
final class ViewerHubStateMachineTests: XCTestCase {
    typealias Machine = ViewerHubStateMachine<String>

    func machine(maxViewers: Int = 4, secondEncoding: Bool = false, configure: (inout SharingConfiguration) -> Void = { _ in })
        -> Machine {
        var configuration = SharingConfiguration(maxViewers: maxViewers, configuredBitrateKbps: 3000, droppableOffHoldMicros: 0)
        configure(&configuration)
        return Machine(configuration: configuration, secondEncodingEnabled: secondEncoding)
    }

    /// Admits and registers viewer `id` (peer "peer-<id>") from `address` at `now`.
    func join(_ machine: inout Machine, _ id: String, address: String? = nil, at now: UInt64 = 0, connect: Bool = true) {
        XCTAssertEqual(machine.admit(clientAddress: address).0, .admitted, id)
        XCTAssertTrue(machine.register(id: id, peer: "peer-" + id, clientAddress: address, nowMicros: now), id)
        if connect { XCTAssertEqual(machine.connected(id: id), [.joined("peer-" + id, id: id, viewers: machine.peerCount)]) }
    }

    /// A viewer that joins is announced, and its first keyframe request (the lobby's "new viewer") goes to the
    /// main encoder at once.
    func testAViewerThatJoinsGetsAKeyframe() {
        var machine = machine()
        XCTAssertEqual(machine.admit(clientAddress: "192.0.2.1").0, .admitted)
        XCTAssertEqual(machine.pending, 1)
        XCTAssertTrue(machine.register(id: "a", peer: "peer-a", clientAddress: "192.0.2.1", nowMicros: 10))
        XCTAssertEqual(machine.pending, 0)
        XCTAssertEqual(machine.connected(id: "a"), [.joined("peer-a", id: "a", viewers: 1)])
        XCTAssertEqual(machine.keyframeNeeded(id: "a", reason: "new viewer", nowMicros: 1_000), [
            .keyframeRequested(peer: "a", reason: "new viewer", passed: true, encoding: .main), .requestKeyframe(.main),
        ])
        XCTAssertEqual(machine.counters.keyframeRequests, 1)
        XCTAssertEqual(machine.watching.map(\.id), ["a"])
        let delivery = machine.deliver(from: .main, isKeyframe: true, captureMicros: 5, width: 1280, height: 720)
        XCTAssertEqual(delivery.targets.map(\.peer), ["peer-a"])
        XCTAssertEqual(delivery.targets.map(\.captureMicros), [5])
    }

    /// A viewer that cannot decode (no key) asks every second for ever: its requests pass at 0, 1, 5 and
    /// then every 16 s (the spacing grows 1 → 4 → 16 s), the rest are held and counted; another viewer's first
    /// request still passes at once. Its page given the key restarts it once per 10 s.
    func testAKeylessViewersRequestsAreSpaced() {
        var machine = machine()
        join(&machine, "keyless")
        join(&machine, "other")
        var passedAt: [UInt64] = []
        for second in 0..<40 {
            let now = UInt64(second) * 1_000_000
            if machine.keyframeNeeded(id: "keyless", reason: "PLI/FIR", nowMicros: now).contains(.requestKeyframe(.main)) { passedAt.append(now) }
        }
        XCTAssertEqual(passedAt, [0, 1_000_000, 5_000_000, 21_000_000, 37_000_000])
        XCTAssertEqual(machine.counters.keyframeRequestsHeld, 35)
        XCTAssertEqual(machine.viewers["keyless"]?.keyframes?.spacingMicros, ViewerKeyframeGate.maximumSpacingMicros)
        XCTAssertEqual(machine.keyframeNeeded(id: "other", reason: "PLI/FIR", nowMicros: 39_500_000).last, .requestKeyframe(.main))
        XCTAssertEqual(machine.keyframeWanted(id: "keyless", nowMicros: 40_000_000)?.actions, [.requestKeyframe(.main)])
        XCTAssertEqual(machine.keyframeWanted(id: "keyless", nowMicros: 45_000_000)?.wanted, false, "within 10 s")
        XCTAssertNil(machine.keyframeWanted(id: "nobody", nowMicros: 45_000_000))
    }

    /// Estimates become rate decisions: the lowest counts; a GCC viewer far below the rest is an outlier
    /// (thinned, the droppable cadence on) instead of lowering everyone; its leaving turns the cadence off.
    func testEstimatesBecomeRateDecisions() {
        var machine = machine()
        join(&machine, "fast")
        join(&machine, "slow")
        XCTAssertEqual(machine.estimate(id: "fast", bitsPerSecond: 2_000_000, source: .congestionControl, nowMicros: 0),
                       [.setBitrate(.set(2000), peer: "fast")])
        let outlier = machine.estimate(id: "slow", bitsPerSecond: 500_000, source: .congestionControl, nowMicros: 0)
        XCTAssertEqual(outlier, [.setCadence(
            CadenceChange(from: nil, to: 4, outliers: ["slow"], highestKbps: 2000, outlierKbps: 500, generation: 1), peer: "slow")])
        XCTAssertEqual(machine.estimate(id: "fast", bitsPerSecond: 900_000, source: .remb, nowMicros: 0), [],
                       "a GCC viewer's REMB is only a ceiling of its target")
        XCTAssertEqual(machine.estimate(id: "nobody", bitsPerSecond: 100_000, source: .remb, nowMicros: 0), [], "no record, no estimate")
        XCTAssertEqual(machine.closed(id: "slow", reason: "BYE", failed: false, nowMicros: 1), [
            .left("peer-slow", id: "slow", reason: "BYE", failed: false, viewers: 1),
            .setCadence(CadenceChange(from: 4, to: nil, outliers: [], highestKbps: 2000, outlierKbps: nil, generation: 2), peer: "slow"),
        ])
        XCTAssertEqual(machine.counters.bitrateChanges, 1)
        XCTAssertEqual(machine.counters.cadenceChanges, 2)
        // The feedback check: heard keeps it counting; 3 s of silence and its estimate no longer holds the rate.
        XCTAssertEqual(machine.feedbackCheck(rtcpCounts: [("fast", 1)], nowMicros: 1_000_000), [])
        XCTAssertEqual(machine.feedbackCheck(rtcpCounts: [("fast", 1)], nowMicros: 4_000_000),
                       [.viewerSilent("fast"), .setBitrate(.useDefault, peer: "fast")])
        XCTAssertEqual(machine.feedbackCheck(rtcpCounts: [("fast", 2)], nowMicros: 4_500_000),
                       [.viewerHeardAgain("fast"), .setBitrate(.set(2000), peer: "fast")])
    }

    /// The call full, a newcomer from another address takes the slot of the oldest unconnected session of an
    /// address over its share (the shell closes it); one from that address is refused with its count.
    func testASlotIsGivenUpWhenFull() {
        var machine = machine(maxViewers: 3) { $0.maxPendingPerAddress = 1 }
        for (index, id) in ["x1", "x2", "x3"].enumerated() { join(&machine, id, address: "198.51.100.7", at: UInt64(index), connect: false) }
        let (admission, actions) = machine.admit(clientAddress: "203.0.113.9")
        XCTAssertEqual(admission, .admitted)
        XCTAssertEqual(actions, [.giveUpSlot("peer-x1", id: "x1", newcomer: "203.0.113.9")])
        XCTAssertEqual(machine.peerCount, 2)
        XCTAssertNil(machine.peer(of: "x1"), "given up: no slot, no frames")
        XCTAssertEqual(machine.admit(clientAddress: "198.51.100.7").0, .tooManyPending(2))
        XCTAssertEqual(machine.counters.sessionsGivenUp, 1)
        XCTAssertEqual(machine.counters.sessionsRefused, 1)
        XCTAssertTrue(machine.register(id: "y", peer: "peer-y", clientAddress: "203.0.113.9", nowMicros: 10))
        XCTAssertEqual(machine.closed(id: "x1", reason: "gave its slot up", failed: false, nowMicros: 11), [], "never watched: no log line")
        XCTAssertEqual(machine.stateKept(of: "x1"), [])
        XCTAssertTrue(machine.endedEarly.isEmpty, "an expected close")
        XCTAssertEqual(machine.admit(clientAddress: "203.0.113.10").1, [.giveUpSlot("peer-x2", id: "x2", newcomer: "203.0.113.10")],
                       "x still holds 2 unconnected sessions")
        XCTAssertTrue(machine.register(id: "z", peer: "peer-z", clientAddress: "203.0.113.10", nowMicros: 12))
        XCTAssertEqual(machine.admit(clientAddress: nil).0, .full, "x holds its share of 1 now")
    }

    /// A viewer that asked for keyframes, had estimates, was heard, moved to the low encoding and was sent
    /// frames leaves: nothing of it survives — no record, no estimate, no assignment — only its line in the
    /// ended list. The same after a DELETE, and for a session that ended before it was registered.
    func testAViewerLeavingClearsEverythingOfIt() {
        var machine = machine(secondEncoding: true)
        join(&machine, "fast")
        join(&machine, "slow")
        _ = machine.deliver(from: .main, isKeyframe: true, captureMicros: 0, width: 1280, height: 720)
        _ = machine.estimate(id: "fast", bitsPerSecond: 2_500_000, source: .congestionControl, nowMicros: 0)
        let start = machine.estimate(id: "slow", bitsPerSecond: 400_000, source: .congestionControl, nowMicros: 0)
        XCTAssertTrue(start.contains { if case .secondEncoder(.start, _) = $0 { true } else { false } }, "\(start)")
        _ = machine.keyframeNeeded(id: "slow", reason: "PLI/FIR", nowMicros: 0)
        let moved = machine.feedbackCheck(rtcpCounts: [("fast", 5), ("slow", 5)], nowMicros: 2_000_000)
        XCTAssertTrue(moved.contains(.requestKeyframe(.low)), "\(moved)")
        XCTAssertEqual(machine.viewers["slow"]?.encoding.description, "main->low")
        let low = machine.deliver(from: .low, isKeyframe: true, captureMicros: 2_000_000, width: 640, height: 360)
        XCTAssertEqual(low.targets.map(\.peer), ["peer-slow"])
        XCTAssertEqual(low.switched.map(\.id), ["slow"])
        XCTAssertEqual(machine.sendRateKbps(id: "slow", bytes: 1000, ageMicros: 1_000_000, nowMicros: 2_000_000), 8, accuracy: 0.01)
        XCTAssertEqual(Set(machine.stateKept(of: "slow")), ["record", "follower.estimate", "follower.servedElsewhere", "encodings"])

        _ = machine.closed(id: "slow", reason: "consent expired", failed: true, nowMicros: 2_100_000)
        XCTAssertEqual(machine.stateKept(of: "slow"), [])
        XCTAssertEqual(machine.recentlyEnded, [.init(id: "slow", reason: "consent expired", failed: true)])
        XCTAssertTrue(machine.deliver(from: .low, isKeyframe: false, captureMicros: 2_200_000, width: 640, height: 360).targets.isEmpty)

        XCTAssertEqual(machine.remove(id: "fast"), "peer-fast")
        XCTAssertNil(machine.remove(id: "fast"), "already leaving")
        XCTAssertEqual(machine.peerCount, 0)
        XCTAssertFalse(machine.stateKept(of: "fast").isEmpty, "kept until its peer has closed")
        _ = machine.closed(id: "fast", reason: "DELETE by the viewer", failed: false, nowMicros: 2_200_000)
        XCTAssertEqual(machine.stateKept(of: "fast"), [])

        XCTAssertEqual(machine.admit(clientAddress: nil).0, .admitted)
        XCTAssertEqual(machine.closed(id: "early", reason: "ICE failed", failed: true, nowMicros: 3_000_000), [])
        XCTAssertEqual(machine.stateKept(of: "early"), ["endedEarly"])
        XCTAssertFalse(machine.register(id: "early", peer: "peer-early", clientAddress: nil, nowMicros: 3_000_001), "the shell closes it")
        XCTAssertEqual(machine.stateKept(of: "early"), [])
        XCTAssertTrue(machine.viewers.isEmpty)
        XCTAssertEqual(machine.pending, 0)
    }

    /// The call ends: every peer with a slot is returned to be closed, offers are refused, and their closes
    /// leave nothing behind.
    func testCloseAllRefusesOffersAndClosesEveryPeer() {
        var machine = machine()
        join(&machine, "a")
        join(&machine, "b", connect: false)
        XCTAssertEqual(machine.closeAll().sorted(), ["peer-a", "peer-b"])
        XCTAssertEqual(machine.admit(clientAddress: nil).0, .full)
        XCTAssertEqual(machine.peerCount, 0)
        for id in ["a", "b"] { _ = machine.closed(id: id, reason: "the call ended", failed: false, nowMicros: 1) }
        XCTAssertTrue(machine.viewers.isEmpty)
        XCTAssertTrue(machine.endedEarly.isEmpty)
    }
}
