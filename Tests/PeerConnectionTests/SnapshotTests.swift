import PeerConnection
import RTP
import ScreencastSupport
import XCTest

/// What `/stats` shows of a peer (``PeerConnection/Snapshot``), from a call run in memory.
final class SnapshotTests: XCTestCase {
    /// The keys `/stats` has, in order (the viewer page, tools/bench and the tests read them; `consent` is new).
    static let keys = [
        "id", "state", "endReason", "ice", "consent", "pair", "dataChannels", "dtls", "srtp", "lobby", "keyframeWaitMs", "rttMs", "fractionLost", "lossEstimate",
        "packetsLost", "jitterMs", "nacks", "nackedPackets", "retransmitted", "retransmitSkipped", "retransmitDuplicates", "retransmitOverBudget", "rtx", "plis",
        "firs", "rembs", "rembKbps", "keyframeRequests", "framesSent", "keyframesSent", "packetsSent", "bytesSent", "senderReports",
        "receiverReports", "datagramsReceived", "rtcpReceived", "ignoredDatagrams", "droppedDatagrams", "dtlsCipher",
        "dtlsRecordsPassed", "dtlsRecordsDropped", "srtpErrors", "sendsDropped", "pacerQueue",
        "pacerOverflows", "historyPackets", "historyBytes", "lobbyDropped", "congestion", "captureToSentMs", "audio", "ageS", "connectMs",
    ]

    func field(_ json: JSONValue, _ key: String) -> JSONValue? {
        guard case .object(let fields) = json else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    func testAConnectedPeersEntry() throws {
        let call = try InMemoryCall()
        try call.run(until: 3_000_000)
        try call.toSender([call.viewer.pictureLoss(), call.viewer.estimate(900_000)])
        try call.run(until: 3_500_000)
        let snapshot = PeerConnection.Snapshot(
            call.machine, datagramsSent: 1234, bytesSent: 567_890, sendsDropped: 3, nowMicros: call.now)
        XCTAssertEqual(snapshot.state, .connected)
        XCTAssertEqual(snapshot.ageSeconds, Double(call.now - 1_000_000) / 1_000_000, accuracy: 1e-9)
        let json = snapshot.json
        guard case .object(let fields) = json else { return XCTFail("not an object") }
        XCTAssertEqual(fields.map(\.0), Self.keys)
        XCTAssertEqual(field(json, "id"), .string("in-memory"))
        XCTAssertEqual(field(json, "state"), .string("connected"))
        XCTAssertEqual(field(json, "dtls"), .string("server"))
        XCTAssertEqual(field(json, "srtp"), .string(SRTPNames.gcm))
        XCTAssertEqual(field(json, "lobby"), .string("open"))
        XCTAssertEqual(field(json, "congestion"), .null, "this viewer offered no transport-wide CC")
        XCTAssertEqual(field(json, "dataChannels"), .null, "this viewer offered no data channel")
        XCTAssertEqual(field(json, "audio"), .null, "this viewer offered no audio")
        guard case .double(let rtt)? = field(json, "rttMs") else { return XCTFail("no RTT") }
        XCTAssertEqual(rtt, 20, accuracy: 0.05)
        XCTAssertEqual(field(json, "plis"), .int(1))
        XCTAssertEqual(field(json, "rembKbps"), .int(900))
        XCTAssertEqual(field(json, "keyframeRequests"), .int(2))
        XCTAssertEqual(field(json, "keyframesSent"), .int(2))
        XCTAssertEqual(field(json, "bytesSent"), .int(567_890))
        XCTAssertEqual(field(json, "sendsDropped"), .int(3))
        XCTAssertEqual(field(json, "rtx"), .bool(true))
        XCTAssertEqual(field(json, "srtpErrors"), .int(0))
        XCTAssertEqual(field(json, "dtlsCipher"), .string("ECDHE-ECDSA-AES128-GCM-SHA256"))
        XCTAssertEqual(field(json, "ignoredDatagrams"), .int(0))
        guard case .int(let passed)? = field(json, "dtlsRecordsPassed") else { return XCTFail("no DTLS records") }
        XCTAssertGreaterThan(passed, 3, "the viewer's flights")
        XCTAssertEqual(field(json, "pair"), .null, "no ICE in memory")
        // The viewer reports every 500 ms: at most that much silence counted, never lapsed.
        guard case .object(let consent)? = field(json, "consent") else { return XCTFail("no consent") }
        XCTAssertEqual(consent.map(\.0), ["state", "silentMs", "lapses", "held"])
        XCTAssertEqual(consent[0].1, .string("fresh"))
        guard case .int(let silent) = consent[1].1 else { return XCTFail("\(consent)") }
        XCTAssertLessThanOrEqual(silent, 500)
        XCTAssertEqual(consent[2].1, .int(0))
        XCTAssertEqual(consent[3].1, .int(0))
        XCTAssertEqual(field(json, "endReason"), .null)
        guard case .object(let latency)? = field(json, "captureToSentMs") else { return XCTFail("no latency") }
        XCTAssertEqual(latency.first?.0, "frames")
        XCTAssertEqual(snapshot.sender.stream.framesSent, call.framesFromTheFirstKeyframe.count)
    }

    func testAnEndedPeersEntry() throws {
        let call = try InMemoryCall()
        try call.run(until: 2_000_000)
        call.carry(call.machine.close(reason: "the call ended", nowMicros: call.now))
        let json = PeerConnection.Snapshot(call.machine, datagramsSent: 0, bytesSent: 0, sendsDropped: 0, nowMicros: call.now).json
        XCTAssertEqual(field(json, "state"), .string("closed"))
        XCTAssertEqual(field(json, "endReason"), .string("the call ended"))
        XCTAssertEqual(field(json, "pacerQueue"), .int(0))
        let connecting = try InMemoryCall()
        XCTAssertEqual(field(PeerConnection.Snapshot(connecting.machine, datagramsSent: 0, bytesSent: 0, sendsDropped: 0, nowMicros: 1_000_000).json, "consent"),
                       .null, "no consent before DTLS is done")
    }
}

/// libsrtp's names of the profiles as `/stats` shows them.
enum SRTPNames {
    static let gcm = "SRTP_AEAD_AES_128_GCM"
}
