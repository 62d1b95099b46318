import CongestionControl
import RTP
import RTPSession
import XCTest

/// Thinning a slow viewer to its estimate with non-reference frames: over the budget (1 s of the target) a
/// droppable frame is never packetized and no keyframe is asked for; while droppable frames come, reference
/// frames still go out up to the hard bound (2 s), past which the old last resort (drop, lobby reset,
/// keyframe) remains; without droppable frames, the last resort comes at the budget as before. Target: the
/// controller's 300 kbit/s start rate, so 1 s is 37.5 kB and 2 s 75 kB.
final class DroppableThinningTests: XCTestCase {
    static let id: UInt8 = 3

    func chain(twcc: Bool = true) throws -> RTPSenderChain {
        try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            initialSequenceNumber: 65_530, initialPictureID: 32_765, duplicateRetransmissionsAboveLoss: nil,
            transportWideCC: twcc ? .init(extensionID: Self.id) : nil))
    }

    func frame(_ size: Int, keyframe: Bool = false, droppable: Bool = false, at micros: UInt64) -> OutgoingVideoFrame {
        OutgoingVideoFrame(bytes: Session.frame(size, seed: UInt8(truncatingIfNeeded: micros / 1000)), isKeyframe: keyframe,
                           captureMicros: micros, isDroppable: droppable)
    }

    /// Every media packet the pacer lets go from `start` until it is empty, parsed.
    func drain(_ chain: inout RTPSenderChain, from start: UInt64) throws -> [(packet: RTPPacket, descriptor: VP8PayloadDescriptor)] {
        var out: [(RTPPacket, VP8PayloadDescriptor)] = []
        var now = start
        while !chain.pacer.isEmpty, now < start + 60_000_000 {
            for sent in chain.release(nowMicros: now) where sent.kind == .media {
                let packet = try RTPPacket(parsing: sent.bytes)
                out.append((packet, try VP8PayloadDescriptor.parse(packet.payload).0))
            }
            now += 5_000
        }
        return out
    }

    func testOverTheBudgetDroppableFramesAreLeftOutWithoutAKeyframeAndTheStreamStaysContiguous() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        var sent: [(at: UInt64, droppable: Bool)] = []
        func send(_ size: Int, keyframe: Bool = false, droppable: Bool = false, at: UInt64) throws -> SenderOutcome {
            let before = chain.stream.statistics.framesSent
            let outcome = try chain.send(frame(size, keyframe: keyframe, droppable: droppable, at: at), nowMicros: at)
            if chain.stream.statistics.framesSent > before { sent.append((at, droppable)) }
            return outcome
        }
        _ = try send(2_000, keyframe: true, at: 0)
        // Under the budget a droppable frame goes out like any other (with the N bit).
        XCTAssertNil(try send(3_000, droppable: true, at: 33_000).keyframeRequest)
        for index in 2...5 { _ = try send(9_000, at: UInt64(index) * 33_000) }  // 39.5 kB waiting: over 1 s
        XCTAssertEqual(chain.report.chain.framesThinnedDroppable, 0)
        XCTAssertEqual(chain.report.chain.referenceFramesOverBudget, 0)
        // Over it: one reference frame in three, as the shared encoder's cadence makes them.
        var outcomes: [SenderOutcome] = []
        for index in 6...14 {
            let at = UInt64(index) * 33_000
            outcomes.append(try send(2_000, droppable: index % 3 != 0, at: at))
        }
        let report = chain.report
        XCTAssertEqual(outcomes.compactMap(\.keyframeRequest), [], "no keyframe asked")
        XCTAssertEqual(report.chain.framesThinnedDroppable, 6)
        XCTAssertEqual(report.chain.referenceFramesOverBudget, 3, "frames 6, 9, 12: queued")
        XCTAssertEqual(report.chain.framesThinned, 0)
        XCTAssertEqual(report.chain.keyframeRequests, 1, "only the new viewer's")
        XCTAssertEqual(report.lobbyState, "open")
        XCTAssertEqual(report.stream.framesSent, 1 + 1 + 4 + 3)

        // What leaves: sequence numbers +1 per packet and PictureIDs +1 per frame, across the gaps and both wraps.
        let packets = try drain(&chain, from: 600_000)
        XCTAssertEqual(packets.count, report.stream.packetsSent)
        for (a, b) in zip(packets, packets.dropFirst()) {
            XCTAssertEqual(b.packet.sequenceNumber, a.packet.sequenceNumber &+ 1)
            let step = (b.descriptor.pictureID! &- a.descriptor.pictureID!) & 0x7FFF
            XCTAssertEqual(step, a.packet.timestamp == b.packet.timestamp ? 0 : 1, "PictureID at seq \(b.packet.sequenceNumber)")
        }
        XCTAssertEqual(packets.first?.descriptor.pictureID, 32_765)
        XCTAssertEqual(packets.last?.descriptor.pictureID, (32_765 + UInt16(sent.count) - 1) & 0x7FFF, "one PictureID per frame sent")
        // The N bit marks the droppable frame that went out, and nothing else.
        let timestamps = Set(packets.filter(\.descriptor.nonReference).map(\.packet.timestamp))
        XCTAssertEqual(timestamps.count, 1)
        XCTAssertEqual(packets.filter(\.descriptor.nonReference).count, 3, "the 3 kB droppable frame's packets")
    }

    func testReferenceFramesGoOutUpToTheHardBoundThenTheLastResort() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(frame(2_000, keyframe: true, at: 0), nowMicros: 0)
        _ = try chain.send(frame(100, droppable: true, at: 10_000), nowMicros: 10_000)  // the cadence is on
        var requests: [KeyframeReason?] = []
        // 9 kB reference frames: the 6th to 9th find 45 to 73 kB waiting (over 1 s, within 2 s), the 10th 82 kB.
        for index in 1...10 {
            let at = UInt64(index) * 33_000
            requests.append(try chain.send(frame(9_000, at: at), nowMicros: at).keyframeRequest)
        }
        XCTAssertEqual(requests, Array(repeating: KeyframeReason?.none, count: 10),
                       "the 10th is dropped, but its keyframe waits for the queue to drain")
        XCTAssertEqual(chain.report.chain.referenceFramesOverBudget, 4)
        XCTAssertEqual(chain.report.chain.framesThinned, 1)
        XCTAssertEqual(chain.report.chain.keyframeRequestsDeferred, 1)
        XCTAssertEqual(chain.report.lobbyState, "waiting")
        // Waiting for the keyframe, a droppable frame goes nowhere either, and is the lobby's drop, not thinning.
        let dropped = chain.report.lobbyDropped
        _ = try chain.send(frame(500, droppable: true, at: 400_000), nowMicros: 400_000)
        XCTAssertEqual(chain.report.lobbyDropped, dropped + 1)
        XCTAssertEqual(chain.report.chain.framesThinnedDroppable, 0)
        // A retry interval later (1 s) the queue still holds over 1 s of the target (82 kB at 300 kbit/s, the
        // pacer never released here): deferred again, with droppable frames still coming.
        _ = try chain.send(frame(500, droppable: true, at: 1_300_000), nowMicros: 1_300_000)
        XCTAssertNil(chain.handleTimer(nowMicros: 1_330_001, ntp: Session.anyArrival).keyframeRequest)
        XCTAssertEqual(chain.report.chain.keyframeRequestsDeferred, 2)
        // Drained: the keyframe is asked for.
        var now: UInt64 = 1_400_000
        while !chain.pacer.isEmpty, now < 60_000_000 {
            _ = chain.release(nowMicros: now)
            now += 5_000
        }
        _ = try chain.send(frame(500, droppable: true, at: now), nowMicros: now)
        XCTAssertEqual(chain.handleTimer(nowMicros: max(now, 2_330_001), ntp: Session.anyArrival).keyframeRequest, .stillWaiting)
        _ = try chain.send(frame(4_000, keyframe: true, at: now + 1_000_000), nowMicros: now + 1_000_000)
        XCTAssertEqual(chain.report.lobbyState, "open")
    }

    /// No droppable frame (the cadence off), or none for 2 s: reference frames are thinned at the budget, as
    /// before (nothing could be thinned cleanly, and a queue twice as long would only add latency).
    func testWithoutDroppableFramesReferenceFramesAreThinnedAtTheBudget() throws {
        for droppableAt in [nil, 0] as [UInt64?] {
            var chain = try chain()
            _ = chain.start(nowMicros: 0, sendsMedia: true)
            _ = try chain.send(frame(2_000, keyframe: true, at: 0), nowMicros: 0)
            if let droppableAt { _ = try chain.send(frame(100, droppable: true, at: droppableAt), nowMicros: droppableAt) }
            var requests: [KeyframeReason?] = []
            // From 2.0 s on, more than 2 s after the droppable frame.
            for index in 1...6 {
                let at = 2_000_001 + UInt64(index) * 33_000
                requests.append(try chain.send(frame(9_000, at: at), nowMicros: at).keyframeRequest)
            }
            XCTAssertEqual(requests, Array(repeating: KeyframeReason?.none, count: 5) + [.thinned], "droppable at \(String(describing: droppableAt))")
            XCTAssertEqual(chain.report.chain.referenceFramesOverBudget, 0)
        }
    }

    func testAHardBoundBelowTheBudgetIsTheBudget() throws {
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, cname: "c", transportWideCC: .init(extensionID: Self.id),
            thinningQueueMicros: 1_000_000, referenceQueueMicros: 0))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(frame(2_000, keyframe: true, at: 0), nowMicros: 0)
        _ = try chain.send(frame(100, droppable: true, at: 10_000), nowMicros: 10_000)
        var requests: [KeyframeReason?] = []
        for index in 1...6 {
            let at = UInt64(index) * 33_000
            requests.append(try chain.send(frame(9_000, at: at), nowMicros: at).keyframeRequest)
        }
        XCTAssertEqual(requests, Array(repeating: KeyframeReason?.none, count: 6), "no keyframe asked while the queue is full")
        XCTAssertEqual(chain.report.chain.framesThinned, 1, "the 6th thinned at 1 s")
        XCTAssertEqual(chain.report.chain.referenceFramesOverBudget, 0)
    }

    func testWithoutCongestionControlNothingIsThinned() throws {
        var chain = try chain(twcc: false)
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(frame(2_000, keyframe: true, at: 0), nowMicros: 0)
        for index in 1...20 {
            let at = UInt64(index) * 33_000
            XCTAssertNil(try chain.send(frame(9_000, droppable: index % 2 == 0, at: at), nowMicros: at).keyframeRequest)
        }
        XCTAssertEqual(chain.report.stream.framesSent, 21)
        XCTAssertEqual(chain.report.chain.framesThinnedDroppable, 0)
        XCTAssertEqual(chain.report.chain.framesThinned, 0)
    }

    func testAKeyframeIsNeverDroppable() {
        XCTAssertFalse(OutgoingVideoFrame(bytes: [0], isKeyframe: true, captureMicros: 0, isDroppable: true).isDroppable)
        XCTAssertTrue(OutgoingVideoFrame(bytes: [1], isKeyframe: false, captureMicros: 0, isDroppable: true).isDroppable)
    }
}
