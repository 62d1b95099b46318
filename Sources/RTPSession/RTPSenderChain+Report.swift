public import CongestionControl

extension RTPSenderChain {
    /// Every feature's counters at one moment, for `/stats`.
    public struct Report: Sendable {
        public var stream: OutgoingVideoStream.Statistics
        /// Zero when NACK was not negotiated.
        public var nack: NACKResponder.Statistics
        public var reports: SenderReports.Statistics
        public var keyframes: KeyframeRequests.Statistics
        public var remb: REMBReader.Statistics
        public var chain: Statistics
        /// The lobby: `closed`, `waiting` or `open`; how long the first keyframe took; frames it dropped.
        public var lobbyState: String
        public var lobbyWaitMicros: UInt64?
        public var lobbyDropped: Int
        /// Packets waiting in the pacer, and how often it overflowed.
        public var pacerQueuedPackets: Int
        public var pacerOverflows: Int
        /// Packets and bytes held for retransmission.
        public var historyPackets: Int
        public var historyBytes: Int
        /// Capture → sent latencies.
        public var latency: SendLatency
        /// RTX was negotiated.
        public var rtx: Bool
        /// Transport-wide congestion control (target, acknowledged rate, delay trend, loss, state, ceiling,
        /// pacing rate) and its counters; nil when not negotiated.
        public var congestion: CongestionControlStats?
        public var congestionCounters: TransportWideCongestionControl.Statistics?
        /// The pacer's rate now, bits per second.
        public var pacingBitsPerSecond: Int
    }

    /// The counters now.
    public var report: Report {
        Report(
            stream: stream.statistics, nack: nack?.statistics ?? NACKResponder.Statistics(), reports: reports.statistics,
            keyframes: keyframes.statistics, remb: remb.statistics, chain: statistics, lobbyState: lobby.stateName,
            lobbyWaitMicros: lobby.lastWaitMicros, lobbyDropped: lobby.framesDropped, pacerQueuedPackets: pacer.count,
            pacerOverflows: pacer.overflows, historyPackets: nack?.historyPacketCount ?? 0, historyBytes: nack?.historyByteCount ?? 0,
            latency: latency, rtx: configuration.rtx != nil, congestion: congestion?.stats,
            congestionCounters: congestion?.statistics, pacingBitsPerSecond: pacer.configuration.rateBitsPerSecond)
    }
}
