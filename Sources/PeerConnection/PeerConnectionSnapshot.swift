public import DataChannel
public import DTLS
public import ICE
public import RTPSession
public import ScreencastSupport
public import SRTP

extension PeerConnection {
    /// What `/stats` shows of a peer.
    public struct Snapshot: Sendable {
        public var id: String
        public var state: State
        public var endReason: String?
        public var iceState: ICEAgent.State
        public var selectedPair: ICEAgent.CandidatePair?
        public var dtlsRole: DTLSRole
        public var srtpProfile: SRTPProtectionProfile?
        /// The sender chain's counters (stream, NACK/RTX, reports, PLI/FIR, REMB, lobby, pacer, latency).
        public var sender: RTPSenderChain.Report
        public var datagramsReceived: Int
        /// RTCP compound packets that authenticated and parsed.
        public var rtcpPackets: Int
        /// Datagrams from the peer dropped, by why.
        public var droppedDatagrams: DroppedDatagrams
        /// What the DTLS endpoint took and dropped, records by reason.
        public var dtls: DTLSEndpoint.Statistics
        /// The DTLS cipher suite, once chosen.
        public var dtlsCipherSuite: DTLSCipherSuite?
        /// All dropped datagrams (``DroppedDatagrams/total``).
        public var ignoredDatagrams: Int { droppedDatagrams.total }
        /// Our own SRTP/SRTCP protect failures (the peer's packets that fail are in ``droppedDatagrams``).
        public var srtpErrors: Int
        public var datagramsSent: Int
        /// Bytes handed to ICE (SRTP, SRTCP and DTLS).
        public var bytesSent: Int
        public var sendsDropped: Int
        public var ageSeconds: Double
        public var connectMillis: Double?
        /// Consent to send (RFC 7675, ``ConsentFreshness``) once connected: its phase, the silence counted
        /// since the peer was last heard (µs), how often it lapsed, and what it held back meanwhile.
        public var consent: ConsentFreshness?
        /// Datagrams and frames not sent while consent had lapsed (``PeerConnectionStateMachine/Counters/heldByConsent``).
        public var heldByConsent: Int
        /// The data channels' counters (channels open, messages and bytes in and out), when negotiated.
        public var dataChannels: DataChannelSession.Statistics?
        /// The Opus stream's counters and the viewer's reports about it (nil: the answer accepted no audio).
        public var audio: OutgoingAudioStream.Statistics?

        /// The machine's view now, with what the ICE agent made of the datagrams it was given (handed to
        /// the socket or queued, their bytes, dropped).
        public init(
            _ machine: borrowing PeerConnectionStateMachine, datagramsSent: Int, bytesSent: Int, sendsDropped: Int, nowMicros now: UInt64
        ) {
            let counters = machine.counters
            id = machine.id
            state = machine.state
            endReason = machine.endReason
            iceState = machine.iceState
            selectedPair = machine.selectedPair
            dtlsRole = machine.negotiated.dtlsRole
            srtpProfile = machine.srtpProfile
            sender = machine.senderReport
            datagramsReceived = counters.datagramsReceived
            rtcpPackets = counters.rtcpPackets
            droppedDatagrams = counters.dropped
            dataChannels = machine.dataChannelStatistics
            dtls = machine.dtlsStatistics
            dtlsCipherSuite = machine.dtlsCipherSuite
            srtpErrors = counters.srtpErrors
            self.datagramsSent = datagramsSent
            self.bytesSent = bytesSent
            self.sendsDropped = sendsDropped
            ageSeconds = Double(now - machine.createdMicros) / 1_000_000
            connectMillis = machine.connectedMicros.map { Double($0 - machine.createdMicros) / 1000 }
            consent = machine.consent
            heldByConsent = counters.heldByConsent
            audio = machine.audioStatistics
        }

        /// Its Opus stream in `/stats` (null without audio).
        var audioJSON: JSONValue {
            guard let a = audio else { return .null }
            let lost: JSONValue = a.fractionLost.map { .double(($0 * 100).rounded() / 100) } ?? .null
            let jitter: JSONValue = a.jitterMillis.map { .double(($0 * 100).rounded() / 100) } ?? .null
            return .object([
                ("packetsSent", .number(a.packetsSent)), ("bytesSent", .number(a.rtpBytesSent)),
                ("silentSkipped", .number(a.silentPacketsSkipped)), ("senderReports", .number(a.senderReportsSent)),
                ("fractionLost", lost), ("packetsLost", .number(a.cumulativeLost)), ("jitterMs", jitter),
            ])
        }

        /// The data channels' part of the entry (null when none was negotiated).
        var channelsJSON: JSONValue {
            guard let channels = dataChannels else { return .null }
            let fields: [(String, JSONValue)] = [
                ("open", .number(channels.channelsOpen)), ("opened", .number(channels.channelsOpened)),
                ("closed", .number(channels.channelsClosed)), ("messagesIn", .number(channels.messagesIn)),
                ("messagesOut", .number(channels.messagesOut)), ("bytesIn", .number(channels.bytesIn)),
                ("bytesOut", .number(channels.bytesOut)), ("sendFailures", .number(channels.sendFailures)),
            ]
            return .object(fields)
        }

        /// The peer's entry in `/stats`.
        public var json: JSONValue {
            func optional(_ value: Double?) -> JSONValue { value.map { .double(($0 * 100).rounded() / 100) } ?? .null }
            let pair: JSONValue = selectedPair.map { pair in
                .object([
                    ("local", .string("\(pair.local.address):\(pair.local.port)")),
                    ("remote", .string("\(pair.remote.address):\(pair.remote.port)")),
                    ("remoteType", .string(pair.remote.kind.token)),
                    ("transport", .string(pair.transport)),
                ])
            } ?? .null
            let stream = sender.stream, nack = sender.nack, reports = sender.reports
            let cipher: JSONValue = dtlsCipherSuite.map { .string($0.openSSLName) } ?? .null
            let recordsDropped: [(String, JSONValue)] = DTLSRecordDrop.allCases.map { reason in
                (reason.rawValue, .number(dtls.recordsDropped[reason] ?? 0))
            }
            return .object([
                ("id", .string(id)),
                ("state", .string(state.rawValue)),
                ("endReason", endReason.map { .string($0) } ?? .null),
                ("ice", .string(iceState.rawValue)),
                ("consent", consent.map { consent in
                    .object([
                        ("state", .string(consent.phase.rawValue)), ("silentMs", .number(Int(consent.silentMicros / 1000))),
                        ("lapses", .number(consent.lapses)), ("held", .number(heldByConsent)),
                    ])
                } ?? .null),
                ("pair", pair),
                ("dataChannels", channelsJSON),
                ("dtls", .string(dtlsRole == .server ? "server" : "client")),
                ("srtp", srtpProfile.map { .string($0.description) } ?? .null),
                ("lobby", .string(sender.lobbyState)),
                ("keyframeWaitMs", optional(sender.lobbyWaitMicros.map { Double($0) / 1000 })),
                ("rttMs", optional(reports.link.roundTripMillis)),
                ("fractionLost", optional(reports.link.fractionLost)),
                ("lossEstimate", .double((nack.lossEstimate * 1000).rounded() / 1000)),
                ("packetsLost", .number(reports.cumulativeLost)),
                ("jitterMs", optional(reports.jitterMillis)),
                ("nacks", .number(nack.nacksReceived)),
                ("nackedPackets", .number(nack.packetsNacked)),
                ("retransmitted", .number(nack.packetsRetransmitted)),
                ("retransmitSkipped", .number(nack.retransmissionsSkipped)),
                ("retransmitDuplicates", .number(nack.duplicateRetransmissions)),
                ("retransmitOverBudget", .number(nack.retransmissionsOverBudget)),
                ("rtx", .bool(sender.rtx)),
                ("plis", .number(sender.keyframes.plisReceived)),
                ("firs", .number(sender.keyframes.firsReceived)),
                ("rembs", .number(sender.remb.rembsReceived)),
                ("rembKbps", sender.remb.estimatedBitrate.map { .number($0 / 1000) } ?? .null),
                ("keyframeRequests", .number(sender.chain.keyframeRequests)),
                ("framesSent", .number(stream.framesSent)),
                ("keyframesSent", .number(stream.keyframesSent)),
                ("packetsSent", .number(stream.packetsSent)),
                ("bytesSent", .number(bytesSent)),
                ("senderReports", .number(reports.senderReportsSent)),
                ("receiverReports", .number(reports.receiverReports)),
                ("datagramsReceived", .number(datagramsReceived)),
                ("rtcpReceived", .number(rtcpPackets)),
                ("ignoredDatagrams", .number(ignoredDatagrams)),
                ("droppedDatagrams", droppedDatagrams.json),
                ("dtlsCipher", cipher),
                ("dtlsRecordsPassed", .number(dtls.recordsPassed)),
                ("dtlsRecordsDropped", .object(recordsDropped)),
                ("srtpErrors", .number(srtpErrors)),
                ("sendsDropped", .number(sendsDropped)),
                ("pacerQueue", .number(sender.pacerQueuedPackets)),
                ("pacerOverflows", .number(sender.pacerOverflows)),
                ("historyPackets", .number(sender.historyPackets)),
                ("historyBytes", .number(sender.historyBytes)),
                ("lobbyDropped", .number(sender.lobbyDropped)),
                ("congestion", sender.congestionJSON),
                ("captureToSentMs", sender.latency.json),
                ("audio", audioJSON),
                ("ageS", optional(ageSeconds)),
                ("connectMs", optional(connectMillis)),
            ])
        }
    }
}
