@testable import CongestionControl
import XCTest

/// ``ProbeBitrateEstimator`` (libwebrtc's `ProbeBitrateEstimator::HandleProbeAndEstimateBitrate`): per cluster,
/// send rate = (bytes − last sent packet's) / (last − first send), receive rate = (bytes − first received
/// packet's) / (last − first arrival); a result once 80 % of the cluster's packets and bytes arrived, with
/// both intervals in (0, 1 s] and receive ≤ 2 × send; min(send, receive), or 95 % of receive when it is
/// below 90 % of send (the link saturated).
final class ProbeBitrateEstimatorTests: XCTestCase {
    private func cluster(_ id: Int = 1, packets: Int = 5, bytes: Int = 5000) -> ProbeCluster {
        ProbeCluster(id: id, bitsPerSecond: 4_000_000, minPackets: packets, minBytes: bytes, createdMicros: 0)
    }

    private func result(_ index: Int, sent: Int64, arrival: Int64?, size: Int = 1000, cluster: Int = 1) -> PacketResult {
        PacketResult(sent: SentPacket(sequenceNumber: Int64(index), sendTimeMicros: sent, sizeBytes: size, probeClusterID: cluster),
                     arrivalMicros: arrival)
    }

    /// Feeds packets `index` sent `sendGap` apart and arriving `arrivalGap` apart after `delay`; returns the
    /// result after each.
    private func run(_ estimator: inout ProbeBitrateEstimator, cluster: ProbeCluster, count: Int, sendGap: Int64,
                     arrivalGap: Int64, delay: Int64 = 30_000, size: Int = 1000) -> [Double?] {
        (0..<count).map { index in
            estimator.add(result(index, sent: Int64(index) * sendGap, arrival: delay + Int64(index) * arrivalGap, size: size,
                                 cluster: cluster.id), cluster: cluster)
        }
    }

    /// Receive faster than send (by up to 2×): the send rate is the result. 2× exactly is still valid;
    /// beyond it the timing is broken and there is no result.
    func testReceiveFasterThanSendGivesTheSendRate() throws {
        // 6 × 1000 B sent 2 ms apart: 5000 B over 10 ms = 4 Mbit/s. Arrivals 1.5 ms apart: 5000 B / 7.5 ms.
        var faster = ProbeBitrateEstimator()
        let results = run(&faster, cluster: cluster(), count: 6, sendGap: 2000, arrivalGap: 1500)
        XCTAssertEqual(try XCTUnwrap(results.last ?? nil), 4_000_000, accuracy: 1e-6)
        // 2× exactly: arrivals 1 ms apart → receive 8 Mbit/s = 2 × send: valid, the send rate.
        var double = ProbeBitrateEstimator()
        XCTAssertEqual(try XCTUnwrap(run(&double, cluster: cluster(), count: 6, sendGap: 2000, arrivalGap: 1000).last ?? nil),
                       4_000_000, accuracy: 1e-6)
        // Beyond 2×: arrivals 0.99 ms apart — nothing.
        var broken = ProbeBitrateEstimator()
        XCTAssertTrue(run(&broken, cluster: cluster(), count: 6, sendGap: 2000, arrivalGap: 990).allSatisfy { $0 == nil })
        XCTAssertNil(broken.fetchResult())
    }

    /// The saturation rule's edge: receive at exactly 90 % of send is the minimum (receive); below it, 95 % of
    /// receive.
    func testTheSaturationEdge() throws {
        // Send 5000 B / 10 ms = 4 Mbit/s. Arrivals 2.222… ms apart cannot be exact in µs: use 5000 B over
        // 11 250 µs (3.555 Mbit/s = 88.9 %) and over 11 000 µs (3.636 Mbit/s = 90.9 %).
        var saturated = ProbeBitrateEstimator()
        let low = try XCTUnwrap(run(&saturated, cluster: cluster(), count: 6, sendGap: 2000, arrivalGap: 2250).last ?? nil)
        XCTAssertEqual(low, 0.95 * 5000 * 8 / 0.01125, accuracy: 1e-6)
        var unsaturated = ProbeBitrateEstimator()
        let high = try XCTUnwrap(run(&unsaturated, cluster: cluster(), count: 6, sendGap: 2000, arrivalGap: 2200).last ?? nil)
        XCTAssertEqual(high, 5000 * 8 / 0.011, accuracy: 1e-6)
        // Exactly 90 %: 10 packets sent 1 ms apart (9000 B / 9 ms = 8 Mbit/s) whose first and last arrivals are
        // 10 ms apart (9000 B / 10 ms = 7.2 Mbit/s = 0.9 × 8): not saturated, the minimum. 1 µs later: 95 %.
        func tenPackets(lastArrival: Int64) -> Double? {
            var estimator = ProbeBitrateEstimator()
            let probe = cluster(packets: 10, bytes: 10_000)
            var last: Double?
            for index in 0..<10 {
                let arrival = index == 9 ? lastArrival : 20_000 + Int64(index) * 1111
                last = estimator.add(result(index, sent: Int64(index) * 1000, arrival: arrival), cluster: probe)
            }
            return last
        }
        XCTAssertEqual(try XCTUnwrap(tenPackets(lastArrival: 30_000)), 7_200_000, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(tenPackets(lastArrival: 30_001)), 0.95 * 9000 * 8 / 0.010001, accuracy: 1e-6)
    }

    /// 80 % of the cluster's packets and of its bytes must have arrived: with 10 packets and 10 000 bytes asked
    /// for, the 8th received packet (8000 B) gives the first result, not the 7th; lost ones never count.
    func testEightyPercentOfPacketsAndBytes() {
        var estimator = ProbeBitrateEstimator()
        let probe = cluster(packets: 10, bytes: 10_000)
        var outcomes: [Bool] = []
        for index in 0..<12 {
            let lost = index == 2 || index == 5
            let result = estimator.add(result(index, sent: Int64(index) * 1000, arrival: lost ? nil : 20_000 + Int64(index) * 1000),
                                       cluster: probe)
            outcomes.append(result != nil)
        }
        // Received: 0, 1, 3, 4, 6, 7, 8, 9 (the 8th received) …
        XCTAssertEqual(outcomes, [false, false, false, false, false, false, false, false, false, true, true, true])

        // Enough packets but not bytes: 20 packets of 100 B against 5 packets / 5000 B asked for.
        var small = ProbeBitrateEstimator()
        XCTAssertTrue(run(&small, cluster: cluster(), count: 20, sendGap: 1000, arrivalGap: 1000, size: 100).allSatisfy { $0 == nil })
        // Enough bytes but not packets: 3 packets of 2000 B against 5 packets (4 needed).
        var large = ProbeBitrateEstimator()
        XCTAssertTrue(run(&large, cluster: cluster(), count: 3, sendGap: 1000, arrivalGap: 1000, size: 2000).allSatisfy { $0 == nil })
    }

    /// The intervals: zero (all sent or all received at once) gives nothing, and so does more than 1 s; 1 s
    /// exactly is accepted.
    func testIntervalLimits() throws {
        var sameSend = ProbeBitrateEstimator()
        XCTAssertTrue(run(&sameSend, cluster: cluster(), count: 6, sendGap: 0, arrivalGap: 1000).allSatisfy { $0 == nil })
        var sameArrival = ProbeBitrateEstimator()
        XCTAssertTrue(run(&sameArrival, cluster: cluster(), count: 6, sendGap: 1000, arrivalGap: 0).allSatisfy { $0 == nil })
        // 6 packets over 1 s exactly (200 ms apart), both ways: 5000 B / 1 s = 40 kbit/s.
        var second = ProbeBitrateEstimator()
        XCTAssertEqual(try XCTUnwrap(run(&second, cluster: cluster(), count: 6, sendGap: 200_000, arrivalGap: 200_000).last ?? nil),
                       40_000, accuracy: 1e-9)
        // 1 µs more per gap: the 6th packet makes the send interval 1.000005 s — no result from it (the 4th and
        // 5th, within 1 s, had one).
        var longer = ProbeBitrateEstimator()
        let results = run(&longer, cluster: cluster(), count: 6, sendGap: 200_001, arrivalGap: 200_000)
        XCTAssertNotNil(results[4] as Double?)
        XCTAssertNil(results[5] as Double?)
    }

    /// Out-of-order feedback: the first arrival and the last send are found whatever order results come in,
    /// and the sizes excluded are the right packets' (the first *received*, the last *sent*).
    func testReorderedResultsAndTheExcludedSizes() throws {
        // Sizes differ per packet so the exclusions show: packet i is 1000 + 100 i bytes, sent i ms, arriving
        // at 20 + 1.5 i ms — fed in the order 3, 0, 5, 1, 4, 2.
        var estimator = ProbeBitrateEstimator()
        let probe = cluster(packets: 6, bytes: 1000)
        var last: Double?
        for index in [3, 0, 5, 1, 4, 2] {
            last = estimator.add(result(index, sent: Int64(index) * 1000, arrival: 20_000 + Int64(index) * 1500, size: 1000 + 100 * index),
                                 cluster: probe)
        }
        let total = (0..<6).reduce(0) { $0 + 1000 + 100 * $1 }  // 7500
        let send = Double(total - 1500) * 8 / 0.005     // without the last sent (packet 5, 1500 B): 9.6 Mbit/s
        let receive = Double(total - 1000) * 8 / 0.0075 // without the first received (packet 0, 1000 B): 6.93 Mbit/s
        XCTAssertLessThan(receive, 0.9 * send)
        XCTAssertEqual(try XCTUnwrap(last), 0.95 * receive, accuracy: 1e-6)
    }

    /// Clusters are measured apart; each result is pending until fetched, and a later result replaces an
    /// unfetched one.
    func testClustersAreSeparateAndTheLatestResultIsPending() throws {
        var estimator = ProbeBitrateEstimator()
        let slow = cluster(1)
        let fast = cluster(2)
        // Interleaved: cluster 1 at 2 ms spacing (4 Mbit/s), cluster 2 at 1 ms (8 Mbit/s), both unsaturated.
        for index in 0..<6 {
            estimator.add(result(index, sent: Int64(index) * 2000, arrival: 10_000 + Int64(index) * 2000, cluster: 1), cluster: slow)
            estimator.add(result(100 + index, sent: 50_000 + Int64(index) * 1000, arrival: 60_000 + Int64(index) * 1000, cluster: 2),
                          cluster: fast)
        }
        XCTAssertEqual(try XCTUnwrap(estimator.fetchResult()), 8_000_000, accuracy: 1e-6, "the latest: cluster 2's")
        XCTAssertNil(estimator.fetchResult())
        // One more packet of cluster 1 (sent 12 ms, arriving 22 ms): 6000 B / 12 ms.
        XCTAssertEqual(try XCTUnwrap(estimator.add(result(6, sent: 12_000, arrival: 22_000, cluster: 1), cluster: slow)), 4_000_000,
                       accuracy: 1e-6)
        XCTAssertFalse(estimator.pendingMeasuredPastBurst)
    }

    /// With more than 4 clusters known, clusters whose first arrival is 1 s or more before the newest
    /// arrival are forgotten: a late packet of such a cluster starts it afresh (one packet: no interval).
    func testOldClustersAreForgotten() {
        var estimator = ProbeBitrateEstimator()
        for id in 1...5 {
            let probe = cluster(id)
            for index in 0..<6 {
                estimator.add(result(index, sent: Int64(id) * 100_000 + Int64(index) * 1000,
                                     arrival: Int64(id) * 100_000 + 10_000 + Int64(index) * 1000, cluster: id), cluster: probe)
            }
        }
        // 1.2 s after cluster 1's first arrival a 6th cluster's packet arrives: cluster 1 is dropped.
        estimator.add(result(0, sent: 1_300_000, arrival: 1_310_000, cluster: 6), cluster: cluster(6))
        // A late packet of cluster 1 alone is not enough for a result (its earlier five are gone).
        XCTAssertNil(estimator.add(result(6, sent: 106_000, arrival: 1_320_000, cluster: 1), cluster: cluster(1)))
        // Cluster 5 (first arrival 510 ms) is kept: its 7th packet gives a result at once.
        XCTAssertNotNil(estimator.add(result(6, sent: 506_000, arrival: 516_000, cluster: 5), cluster: cluster(5)))
    }
}
