import CongestionControl
import RTP
@testable import RTPSession
import XCTest

/// Keyframes paced at no more than the congestion estimate (issue 12): ``PacerQueue/Configuration/keyframeRateBitsPerSecond``
/// and ``RTPSenderChain/setTargetBitrate(_:nowMicros:)`` with ``RTPSenderChain/Configuration/keyframePacingFactor``.
/// Packets of 1200 serialized bytes, an injected clock.
final class KeyframePacingTests: XCTestCase {
    func packets(_ count: Int) -> [RTPPacket] { Session.packets(count, size: 1200) }

    /// 2.5 Mbit/s for everything, 1 Mbit/s for keyframe packets: after the 12 kB burst (11 packets: the debt may
    /// reach 12 000 bytes before the next must wait), each keyframe packet weighs 2.5 × 1200 bytes, so the
    /// 50-packet keyframe's last packet leaves (50 − 11) × 1200 × 8 bits ÷ 1 Mbit/s = 374.4 ms after the first
    /// (less the part of the burst's debt still above it): never faster than the estimate.
    func testKeyframePacketsLeaveAtTheKeyframeRate() {
        var pacer = PacerQueue(configuration: .init(rateBitsPerSecond: 2_500_000, keyframeRateBitsPerSecond: 1_000_000))
        XCTAssertTrue(pacer.enqueue(media: packets(50), keyframe: true))
        let released = Session.drain(&pacer, from: 0)
        XCTAssertEqual(released.count, 50)
        // The first packets go while the debt is ≤ 12 000 bytes at 3000 bytes each: 0, 3000, … 12 000 → 5 at once.
        XCTAssertEqual(released.filter { $0.0 == 0 }.count, 5)
        let span = Double(released.last!.0) / 1000
        // The 46th packet after the burst: the debt after 5 packets is 15 000 bytes (at 2.5 Mbit/s: 3000 bytes
        // a packet), each next packet may leave when the debt is back at 12 000: (15 000 − 12 000 + 44 × 3000)
        // bytes at 2.5 Mbit/s = 432 ms.
        let expected: Double = (15_000 - 12_000 + 44 * 3000) * 8 / 2_500
        XCTAssertEqual(span, expected, accuracy: 1, "ms")
        // The keyframe's own rate past the burst: 45 packets of 1200 bytes in `span` ms: 1.0 Mbit/s.
        XCTAssertEqual(45 * 1200 * 8 / span, 1000, accuracy: 3, "kbit/s past the burst")
    }

    /// Interframe packets keep the pacing rate; a keyframe queued before them delays them (FIFO), not their pace.
    func testInterframesKeepThePacingRate() {
        var pacer = PacerQueue(configuration: .init(rateBitsPerSecond: 2_500_000, keyframeRateBitsPerSecond: 1_000_000))
        XCTAssertTrue(pacer.enqueue(media: packets(50)))
        let released = Session.drain(&pacer, from: 0)
        XCTAssertEqual(released.filter { $0.0 == 0 }.count, 11, "the 12 kB burst at 1200 bytes a packet")
        let expected: Double = (13_200 - 12_000 + 38 * 1200) * 8 / 2_500
        XCTAssertEqual(Double(released.last!.0) / 1000, expected, accuracy: 1, "ms at 2.5 Mbit/s")
        // Without a slower keyframe rate a keyframe goes at the pacing rate too.
        var same = PacerQueue(configuration: .init(rateBitsPerSecond: 2_500_000))
        XCTAssertTrue(same.enqueue(media: packets(50), keyframe: true))
        XCTAssertEqual(Session.drain(&same, from: 0).last!.0, released.last!.0)
    }

    /// A keyframe rate at or above the pacing rate changes nothing; the floor is 50 kbit/s.
    func testKeyframeRateLimits() {
        let faster = PacerQueue.Configuration(rateBitsPerSecond: 1_000_000, keyframeRateBitsPerSecond: 4_000_000)
        var pacer = PacerQueue(configuration: faster)
        XCTAssertTrue(pacer.enqueue(media: packets(20), keyframe: true))
        let expected: Double = (13_200 - 12_000 + 8 * 1200) * 8 / 1_000
        XCTAssertEqual(Double(Session.drain(&pacer, from: 0).last!.0) / 1000, expected, accuracy: 1)
        XCTAssertEqual(PacerQueue.Configuration(keyframeRateBitsPerSecond: 10).keyframeRateBitsPerSecond, 50_000)
        var slowed = PacerQueue()
        slowed.setRate(bitsPerSecond: 250_000, keyframeBitsPerSecond: 100_000, nowMicros: 0)
        XCTAssertEqual(slowed.configuration.rateBitsPerSecond, 250_000)
        XCTAssertEqual(slowed.configuration.keyframeRateBitsPerSecond, 100_000)
        slowed.setRate(bitsPerSecond: 250_000, nowMicros: 0)
        XCTAssertNil(slowed.configuration.keyframeRateBitsPerSecond, "nil: keyframes at the pacing rate again")
    }

    /// Through the sender chain: a target of 1 Mbit/s paces media at 2.5 Mbit/s and a 60 kB keyframe at
    /// 1 Mbit/s. Its bytes weigh 2.5 × in the 12 000-byte burst too (4 800 keyframe bytes go at once), so its
    /// packets take (bytes − 4 800 − up to one packet) × 8 bits ÷ 1 Mbit/s ≈ 440 ms to leave, where 2.5 Mbit/s
    /// would have taken ≈ 150 ms; a 12 kB interframe after it keeps 2.5 Mbit/s, a 20 kB one (more than
    /// ``RTPSenderChain/Configuration/largeFrameMicros``, 100 ms, of the target) leaves at 1 Mbit/s.
    func testTheChainPacesAKeyframeAtTheTarget() throws {
        var chain = try RTPSenderChain(configuration: .init(ssrc: 0x1234, payloadType: 96, cname: "k"))
        XCTAssertEqual(chain.configuration.keyframePacingFactor, 1)
        var now: UInt64 = 1_000_000
        _ = chain.start(nowMicros: now, sendsMedia: true)
        chain.setTargetBitrate(1_000_000, nowMicros: now)
        XCTAssertEqual(chain.report.pacingBitsPerSecond, 2_500_000)
        func sendAndDrain(_ frame: OutgoingVideoFrame) throws -> (first: UInt64, last: UInt64, bytes: Int) {
            _ = try chain.send(frame, nowMicros: now)
            var first: UInt64?, last = now, bytes = 0
            for _ in 0..<10_000 {
                let released = chain.release(nowMicros: now)
                if !released.isEmpty {
                    first = first ?? now
                    last = now
                    bytes += released.map(\.bytes.count).reduce(0, +)
                }
                if chain.report.pacerQueuedPackets == 0 { break }
                now += 1000
            }
            return (first ?? now, last, bytes)
        }
        let keyframe = try sendAndDrain(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x10, count: 60_000), isKeyframe: true, captureMicros: now))
        let keyframeMillis = Double(keyframe.last - keyframe.first) / 1000
        XCTAssertGreaterThanOrEqual(keyframeMillis, Double(keyframe.bytes - 4_800 - 1300) * 8 / 1000, "no faster than 1 Mbit/s past the burst")
        XCTAssertLessThanOrEqual(keyframeMillis, Double(keyframe.bytes - 4_800) * 8 / 1000 + 2, "and not slower")
        now += 200_000
        let interframe = try sendAndDrain(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x11, count: 12_000), isKeyframe: false, captureMicros: now))
        let interMillis = Double(interframe.last - interframe.first) / 1000
        XCTAssertLessThanOrEqual(interMillis, Double(interframe.bytes - 12_000) * 8 / 2500 + 2, "interframes at 2.5 Mbit/s")
        // An interframe the target carries in more than 100 ms (20 kB at 1 Mbit/s: 160 ms) is paced as a keyframe.
        now += 200_000
        let large = try sendAndDrain(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x12, count: 20_000), isKeyframe: false, captureMicros: now))
        let largeMillis = Double(large.last - large.first) / 1000
        XCTAssertGreaterThanOrEqual(largeMillis, Double(large.bytes - 4_800 - 1300) * 8 / 1000, "no faster than 1 Mbit/s past the burst")
        XCTAssertLessThanOrEqual(largeMillis, Double(large.bytes - 4_800) * 8 / 1000 + 2, "and not slower")
        // Without largeFrameMicros the same 20 kB interframe leaves at 2.5 Mbit/s: (20 kB − the 12 kB burst) in 26 ms.
        func spanMillis(largeFrameMicros: UInt64?) throws -> Double {
            var chain = try RTPSenderChain(configuration: .init(ssrc: 0x1234, payloadType: 96, cname: "k", largeFrameMicros: largeFrameMicros))
            _ = chain.start(nowMicros: 0, sendsMedia: true)
            chain.setTargetBitrate(1_000_000, nowMicros: 0)
            _ = try chain.send(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x10, count: 500), isKeyframe: true, captureMicros: 0), nowMicros: 0)
            _ = chain.release(nowMicros: 0)
            _ = try chain.send(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x12, count: 20_000), isKeyframe: false, captureMicros: 0), nowMicros: 1_000_000)
            var now: UInt64 = 1_000_000
            while chain.report.pacerQueuedPackets > 0 {
                now = max(now, chain.pacer.nextSendMicros(nowMicros: now) ?? now)
                _ = chain.release(nowMicros: now)
            }
            return Double(now - 1_000_000) / 1000
        }
        XCTAssertEqual(try spanMillis(largeFrameMicros: nil), Double(20_300 - 12_000) * 8 / 2500, accuracy: 4)
        XCTAssertEqual(try spanMillis(largeFrameMicros: 100_000), Double(20_300 - 4_800) * 8 / 1000, accuracy: 12)
        // The factor is bounded by the pacing factor and 0.1.
        XCTAssertEqual(RTPSenderChain.Configuration(ssrc: 1, payloadType: 96, cname: "k", keyframePacingFactor: 9).keyframePacingFactor, 2.5)
        XCTAssertEqual(RTPSenderChain.Configuration(ssrc: 1, payloadType: 96, cname: "k", keyframePacingFactor: 0).keyframePacingFactor, 0.1)
    }

    /// With congestion control, a keyframe is paced at the estimate only while the target is the path's: at
    /// GCC's own max (nothing on the path was seen to limit it: loopback, a LAN) it leaves at the pacing
    /// factor like every frame. A 60 kB keyframe at a 1 Mbit/s target: ≈ 440 ms below the max (3 Mbit/s),
    /// ≈ 155 ms at it (1 Mbit/s max). The start probe is left out of both (no probing here).
    func testAKeyframeAtGCCsMaxIsPacedLikeEveryFrame() throws {
        func keyframeMillis(startKbps: Int, maxKbps: Int) throws -> Double {
            var controller = SendSideCongestionController.Configuration.screenSender
            (controller.startBitsPerSecond, controller.maxBitsPerSecond) = (startKbps * 1000, maxKbps * 1000)
            controller.probing.firstScale = 1
            var chain = try RTPSenderChain(configuration: .init(
                ssrc: 0x1234, payloadType: 96, cname: "k", transportWideCC: .init(extensionID: 3, controller: controller)))
            _ = chain.start(nowMicros: 0, sendsMedia: true)
            XCTAssertEqual(chain.report.pacingBitsPerSecond, 2_500_000)
            _ = try chain.send(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x10, count: 60_000), isKeyframe: true, captureMicros: 0), nowMicros: 0)
            var now: UInt64 = 0
            var first: UInt64?
            while let next = chain.pacer.nextSendMicros(nowMicros: now) {
                now = max(now, next)
                if !chain.release(nowMicros: now).isEmpty { first = first ?? now }
            }
            return Double(now - (first ?? 0)) / 1000
        }
        let pathLimited = try keyframeMillis(startKbps: 1000, maxKbps: 3000)
        let atTheMax = try keyframeMillis(startKbps: 1000, maxKbps: 1000)
        XCTAssertEqual(pathLimited, Double(60_000 - 4_800) * 8 / 1000, accuracy: 25, "at the estimate")
        XCTAssertEqual(atTheMax, Double(60_000 - 12_000) * 8 / 2500, accuracy: 25, "at 2.5 × the target")
    }

    /// The delta queue thinning reads (``RTPSenderChain/queuedDeltaMicros``) charges each queued keyframe packet
    /// at the pace it was queued with. A 60 kB keyframe, then a 60 kB delta frame, at a 1 Mbit/s target: at
    /// GCC's max the keyframe leaves at 2.5 Mbit/s (192 ms), so the delta frame's 480 ms at the target leave
    /// 288 ms of queue to count; below the max the keyframe is paced at 1 Mbit/s (480 ms) and nothing counts.
    /// The pacer's byte counts follow the packets out.
    func testTheDeltaQueueChargesAKeyframeAtItsOwnPace() throws {
        func deltaMillis(maxKbps: Int) throws -> (Double, PacerQueue) {
            var controller = SendSideCongestionController.Configuration.screenSender
            (controller.startBitsPerSecond, controller.maxBitsPerSecond) = (1_000_000, maxKbps * 1000)
            controller.probing.firstScale = 1
            var chain = try RTPSenderChain(configuration: .init(
                ssrc: 0x1234, payloadType: 96, cname: "k", transportWideCC: .init(extensionID: 3, controller: controller)))
            _ = chain.start(nowMicros: 0, sendsMedia: true)
            _ = try chain.send(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x10, count: 60_000), isKeyframe: true, captureMicros: 0), nowMicros: 0)
            _ = try chain.send(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x20, count: 60_000), isKeyframe: false, captureMicros: 1), nowMicros: 0)
            return (try XCTUnwrap(chain.queuedDeltaMicros) / 1000, chain.pacer)
        }
        let (atTheMax, fast) = try deltaMillis(maxKbps: 1000)
        let (pathLimited, slow) = try deltaMillis(maxKbps: 3000)
        let keyframeBytes = fast.queuedKeyframeBytes
        XCTAssertGreaterThan(keyframeBytes, 60_000, "the keyframe with its RTP headers")
        XCTAssertEqual(fast.queuedSlowKeyframeBytes, 0)
        XCTAssertEqual(slow.queuedSlowKeyframeBytes, keyframeBytes)
        let deltaBytes = Double(fast.queuedBytes - keyframeBytes)
        XCTAssertEqual(atTheMax, (deltaBytes * 8 / 1000) - Double(keyframeBytes) * 8 / 2500, accuracy: 0.5, "ms")
        XCTAssertEqual(atTheMax, 288, accuracy: 10, "ms")
        XCTAssertEqual(pathLimited, 0, accuracy: 10, "ms")
        var drained = slow
        XCTAssertEqual(Session.drain(&drained, from: 0).count, slow.count)
        XCTAssertEqual([drained.queuedBytes, drained.queuedKeyframeBytes, drained.queuedSlowKeyframeBytes], [0, 0, 0])
    }

    /// The history counts from when a packet leaves the pacer, not from when it was packetized: a 60 kB
    /// keyframe at a 150 kbit/s target leaves over about 3 s, and a NACK for its last packet 200 ms after
    /// that (3.4 s after the frame was made, past the history's 1 s from then) is still answered.
    func testAKeyframePacedOverSecondsCanStillBeRepaired() throws {
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "k"))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        chain.setTargetBitrate(150_000, nowMicros: 0)
        _ = try chain.send(OutgoingVideoFrame(bytes: [UInt8](repeating: 0x10, count: 60_000), isKeyframe: true, captureMicros: 0), nowMicros: 0)
        var now: UInt64 = 0
        var last: RTPPacket?
        while let next = chain.pacer.nextSendMicros(nowMicros: now) {
            now = max(now, next)
            for packet in chain.release(nowMicros: now) where packet.kind == .media { last = try RTPPacket(parsing: packet.bytes) }
        }
        let lastPacket = try XCTUnwrap(last)
        XCTAssertGreaterThan(now, 2_800_000, "the keyframe took \(now / 1000) ms to leave at 150 kbit/s")
        let nackAt = now + 200_000
        _ = chain.receiveRTCP(try Session.compound([Session.nack([lastPacket.sequenceNumber])]), nowMicros: nackAt, arrival: Session.anyArrival)
        let resent = chain.release(nowMicros: nackAt).filter { $0.kind == .retransmission }
        XCTAssertEqual(resent.count, 2, "answered from the history (twice: the NACK itself puts the loss seen at 2 %)")
        for copy in resent {
            let original = try RTXPacketizer.unwrap(try RTPPacket(parsing: copy.bytes), originalSSRC: Session.ssrc, originalPayloadType: 96)
            XCTAssertEqual(original.sequenceNumber, lastPacket.sequenceNumber)
            XCTAssertEqual(original.payload, lastPacket.payload)
        }
    }
}
