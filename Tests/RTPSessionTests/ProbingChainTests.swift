import CongestionControl
import RTP
import RTPSession
import XCTest

/// Probing in the chain (libwebrtc's `ProbeController` + `BitrateProber` shape), with the controller's
/// default probing (the screen sender's has no start probes): its clusters (3× and 6× the 300 kbit/s start,
/// then further ones) leave at their own rate — media ahead of its paced
/// turn, RTX copies of recent packets when no media waits — tagged in the send history, so the feedback
/// about them raises the target within a second instead of AIMD's ~8 %/s. All in memory with an injected clock.
final class ProbingChainTests: XCTestCase {
    static let id: UInt8 = 5

    func chain(rtx: Bool = true) throws -> RTPSenderChain {
        try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: rtx ? RTXStream(ssrc: Session.rtxSSRC, payloadType: 97) : nil, cname: "c",
            initialSequenceNumber: 100, duplicateRetransmissionsAboveLoss: nil,
            transportWideCC: .init(extensionID: Self.id, initialSequenceNumber: 1, controller: .init(probing: .init()))))
    }

    func frame(_ size: Int, keyframe: Bool, at micros: UInt64) -> OutgoingVideoFrame {
        OutgoingVideoFrame(bytes: Session.frame(size), isKeyframe: keyframe, captureMicros: micros)
    }

    /// Runs the chain's timer every 100 µs from `from` to `to`, returning (send time, packet) for each release.
    func run(_ chain: inout RTPSenderChain, from: UInt64, to: UInt64) -> [(UInt64, RTPSenderChain.OutgoingPacket)] {
        var out: [(UInt64, RTPSenderChain.OutgoingPacket)] = []
        for now in stride(from: from, to: to, by: 100) {
            _ = chain.handleTimer(nowMicros: now, ntp: Session.anyArrival)
            out += chain.release(nowMicros: now).map { (now, $0) }
        }
        return out
    }

    /// The start clusters pace a 20 kB keyframe: the first packets leave at 900 kbit/s (one 1.2 kB packet per
    /// 10.7 ms, less the prober's 1 ms burst), the next at 1.8 Mbit/s, then the media pacer (750 kbit/s, its 12 kB burst) takes the rest.
    func testStartClustersPaceMediaAtTheirRates() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(chain.probing.probeClusterCount, 2)
        XCTAssertEqual(chain.probing.activeProbeCluster?.bitsPerSecond, 900_000)
        _ = try chain.send(frame(20_000, keyframe: true, at: 0), nowMicros: 0)
        let sent = run(&chain, from: 0, to: 300_000)
        XCTAssertEqual(chain.statistics.probeClustersSent, 2)
        XCTAssertEqual(chain.statistics.probePaddingPackets, 0, "media was waiting: no padding")
        let probed = try XCTUnwrap(chain.report.congestionCounters?.probePackets)
        XCTAssertEqual(probed, 10, "5 packets each (the 15 ms minimum is fewer bytes at these rates)")
        // Inter-packet gaps: the previous packet's time at its cluster's rate (the first gap less the 1 ms
        // burst), to the 100 µs tick.
        for index in 1..<10 {
            let rate = index <= 5 ? 900_000.0 : 1_800_000.0
            let expected = Double(sent[index - 1].1.bytes.count - 8) * 8 / rate * 1_000_000 - (index == 1 ? 1_000 : 0)
            XCTAssertEqual(Double(sent[index].0 - sent[index - 1].0), expected, accuracy: 200, "packet \(index)")
        }
        XCTAssertEqual(sent.count, chain.report.stream.packetsSent, "then the pacer sent the rest")
        XCTAssertTrue(sent.allSatisfy { $0.1.kind == .media })
    }

    /// While a cluster waits for its next packet's time, the chain's deadline is that time, not the media
    /// pacer's (whose bucket would let the queued media go now: a deadline that never advances).
    func testDeadlineIsTheClustersNextPacket() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(frame(20_000, keyframe: true, at: 0), nowMicros: 0)
        let first = chain.release(nowMicros: 0)
        XCTAssertEqual(first.count, 1)
        XCTAssertEqual(chain.pacer.nextSendMicros(nowMicros: 100), 100, "the media pacer's bucket is full")
        let next = try XCTUnwrap(chain.nextDeadlineMicros(nowMicros: 100))
        let size = Double(first[0].bytes.count - 8)  // as queued, before the TWCC extension
        XCTAssertEqual(Double(next), size * 8 / 0.9 - 1_000, accuracy: 2, "its size at 900 kbit/s, less the 1 ms burst")
        XCTAssertEqual(chain.release(nowMicros: 100), [])
        XCTAssertEqual(chain.release(nowMicros: next).count, 1)
    }

    /// With nothing queued, a cluster is filled with RTX copies of the last packets sent (newest first): RTX
    /// SSRC and payload type, the original sequence number (RFC 4588 §4) of a packet sent, each numbered.
    func testPaddingIsRTXOfRecentPackets() throws {
        var chain = try chain()
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        _ = try chain.send(frame(2_000, keyframe: true, at: 0), nowMicros: 0)  // 2 packets: part of cluster 1
        let sent = run(&chain, from: 0, to: 200_000)
        let media = sent.filter { $0.1.kind == .media }
        XCTAssertEqual(media.count, 2)
        let padding = try sent.filter { $0.1.kind == .retransmission }.map { try RTPPacket(parsing: $0.1.bytes) }
        XCTAssertEqual(padding.count, 3 + 5, "cluster 1 needs 3 more packets, cluster 2 five")
        XCTAssertEqual(chain.statistics.probePaddingPackets, padding.count)
        XCTAssertEqual(chain.statistics.probePaddingBytes, padding.reduce(0) { $0 + $1.serializedSize - 8 }, "sizes before the TWCC element (4-byte header, ID + 2 bytes, a pad byte)")
        let originals = try media.map { try RTPPacket(parsing: $0.1.bytes).sequenceNumber }
        XCTAssertEqual(originals, [100, 101])
        for (index, packet) in padding.enumerated() {
            XCTAssertEqual(packet.ssrc, Session.rtxSSRC)
            XCTAssertEqual(packet.payloadType, 97)
            let payload = Array(packet.payload)
            let osn = UInt16(payload[0]) << 8 | UInt16(payload[1])
            XCTAssertEqual(osn, index % 2 == 0 ? 101 : 100, "newest first, cycling over what the history holds")
            XCTAssertNotNil(try TransportWideSequenceNumber.read(from: packet, id: Self.id))
        }
        XCTAssertEqual(chain.statistics.probeClustersSent, 2)
        XCTAssertEqual(chain.report.congestionCounters?.probePackets, 10)
    }

    /// A low-rate cluster (start 100 kbit/s: 300 kbit/s, 5 packets, 562 bytes) is filled with RTX
    /// padding-only packets of its share (112 bytes of padding, RFC 3550 §5.1), not 1.2 kB copies.
    func testLowRateClustersArePaddingOnly() throws {
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            initialRTXSequenceNumber: 500,
            transportWideCC: .init(extensionID: Self.id, controller: .init(startBitsPerSecond: 100_000, probing: .init()))))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(chain.probing.activeProbeCluster?.minBytes, 562)
        let sent = try run(&chain, from: 0, to: 100_000).map { try RTPPacket(parsing: $0.1.bytes) }
        XCTAssertEqual(sent.count, 10, "both clusters, 5 packets each")
        for (index, packet) in sent.prefix(5).enumerated() {
            XCTAssertEqual(packet.ssrc, Session.rtxSSRC)
            XCTAssertEqual(packet.sequenceNumber, 500 + UInt16(index), "on the RTX stream's numbers")
            XCTAssertTrue(packet.payload.isEmpty)
            XCTAssertEqual(packet.paddingCount, 112)
        }
        XCTAssertEqual(sent[5].paddingCount, 225, "the 600 kbit/s cluster's share")
        XCTAssertEqual(chain.statistics.probeClustersSent, 2)
    }

    /// Without RTX and without media there is nothing to probe with: the clusters wait, the chain's deadline
    /// is their expiry (no busy loop), and after 1 s they are dropped.
    func testClustersExpireWhenNothingCanBeSent() throws {
        var chain = try chain(rtx: false)
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        XCTAssertEqual(chain.release(nowMicros: 0), [])
        XCTAssertEqual(chain.nextDeadlineMicros(nowMicros: 0), 50_000, "the controller's tick, not the probe")
        XCTAssertEqual(chain.release(nowMicros: 1_000_002), [])
        XCTAssertEqual(chain.statistics.probeClustersExpired, 2)
        XCTAssertNil(chain.probing.activeProbeCluster)
        // A stream that sends no media is never given clusters.
        var silent = try self.chain()
        _ = silent.start(nowMicros: 0, sendsMedia: false)
        XCTAssertEqual(silent.probing.probeClusterCount, 0)
        XCTAssertEqual(silent.report.congestionCounters?.probeClustersRequested, 2, "asked for, not sent")
    }

    /// A 2 Mbit/s path (10 ms one way) under 30 fps frames sized to the target: the probe results lift the
    /// target from 300 kbit/s past 1.5 Mbit/s within a second, and never above what the path carried.
    /// Without probes (clusters at 1× never exceed the estimate), AIMD alone stays near the start.
    func testProbeResultsRaiseTheTargetWithinASecond() throws {
        let probed = try targetAfter(micros: 1_000_000, linkBitsPerSecond: 2_000_000)
        XCTAssertGreaterThan(probed.target, 1_500_000, "targets: \(probed.history)")
        XCTAssertLessThan(probed.history.max() ?? 0, 2_100_000, "never above the path's 2 Mbit/s")
        XCTAssertGreaterThanOrEqual(probed.results, 2)
        let slow = try targetAfter(micros: 1_000_000, linkBitsPerSecond: 2_000_000, probing: false)
        XCTAssertLessThan(slow.target, 400_000, "AIMD alone: \(slow.history)")
    }

    func targetAfter(micros end: UInt64, linkBitsPerSecond rate: Double, probing: Bool = true) throws
        -> (target: Int, history: [Int], results: Int) {
        var probingConfiguration = ProbeController.Configuration()
        if !probing { (probingConfiguration.firstScale, probingConfiguration.secondScale, probingConfiguration.periodicIntervalMicros) = (1, 1, 0) }
        var chain = try RTPSenderChain(configuration: .init(
            ssrc: Session.ssrc, payloadType: 96, rtx: RTXStream(ssrc: Session.rtxSSRC, payloadType: 97), cname: "c",
            transportWideCC: .init(extensionID: Self.id, controller: .init(probing: probingConfiguration))))
        _ = chain.start(nowMicros: 0, sendsMedia: true)
        var receiver = TransportFeedbackGenerator(configuration: .init(senderSSRC: 7, mediaSSRC: Session.ssrc))
        var linkFree: UInt64 = 0
        var inFlight: [(arrival: UInt64, number: UInt16)] = []
        var history: [Int] = []
        var frameDue: UInt64 = 0
        var keyframe = true
        for now in stride(from: UInt64(0), to: end, by: 250) {
            if now >= frameDue {
                let size = max(300, (chain.congestion?.controller.targetBitsPerSecond ?? 300_000) / 8 / 30)
                keyframe = try chain.send(frame(keyframe ? 10_000 : size, keyframe: keyframe, at: now), nowMicros: now).keyframeRequest != nil
                frameDue += 33_333
            }
            _ = chain.handleTimer(nowMicros: now, ntp: Session.anyArrival)
            for packet in chain.release(nowMicros: now) {
                linkFree = max(linkFree, now) + UInt64(Double(packet.bytes.count) * 8_000_000 / rate)
                let number = try XCTUnwrap(TransportWideSequenceNumber.read(from: RTPPacket(parsing: packet.bytes), id: Self.id))
                inFlight.append((linkFree + 10_000, number))
            }
            while let first = inFlight.first, first.arrival <= now {
                receiver.record(sequenceNumber: first.number, arrivalMicros: Int64(first.arrival))
                inFlight.removeFirst()
            }
            // Feedback about what has arrived, every 50 ms (its way back is instant).
            guard now % 50_000 == 0, now > 0 else { continue }
            var compound: [UInt8] = []
            for feedback in receiver.feedback(nowMicros: Int64(now)) { try feedback.serialize(into: &compound) }
            guard !compound.isEmpty else { continue }
            _ = chain.receiveRTCP(compound, nowMicros: now, arrival: Session.anyArrival)
            history.append(chain.congestion?.controller.targetBitsPerSecond ?? 0)
        }
        let stats = try XCTUnwrap(chain.report.congestion)
        return (stats.targetBitsPerSecond, history, stats.probeResults)
    }
}
