internal import CongestionControl
import RTP

// Probe clusters (``TransportWideCongestionControl``'s requests to send above the target for a moment): their
// packets leave at the cluster's rate, media from the pacer ahead of its turn, else RTX padding.
extension RTPSenderChain {
    /// Sends the active probe clusters' packets due by `now`: media from the pacer ahead of its turn, else RTX
    /// padding (``probePadding(for:)``); a cluster that cannot be completed
    /// within ``probeTimeoutMicros`` is dropped.
    mutating func releaseProbe(nowMicros now: UInt64, reserving trailer: Int, into out: inout [OutgoingPacket]) {
        let time = Int64(clamping: now)
        while let cluster = probing.activeProbeCluster {
            if time - cluster.createdMicros > Self.probeTimeoutMicros {
                probing.cancelActiveProbe()
                statistics.probeClustersExpired += 1
                continue
            }
            guard probing.nextSendMicros(atMicros: time) <= time else { return }
            let packet: PacerQueue.Packet
            if let queued = pacer.releaseNext() {
                packet = queued
            } else if let padding = probePadding(for: cluster) {
                packet = PacerQueue.Packet(rtp: padding, kind: .retransmission)
                statistics.probePaddingPackets += 1
                statistics.probePaddingBytes += packet.size
            } else {
                return  // nothing to send yet: the cluster waits for media or expires
            }
            let id = probing.onPacketSent(sizeBytes: packet.size, atMicros: time)
            if probing.activeProbeClusterID != id { statistics.probeClustersSent += 1 }
            emit(packet, probeClusterID: id, nowMicros: now, reserving: trailer, into: &out)
        }
    }

    /// The largest share of a cluster (its minimum bytes over its minimum packets) sent as RTX padding-only
    /// packets; above it, RTX copies of recent packets (about 1.2 kB each).
    public static let smallProbeShareBytes = 255

    /// Padding for `cluster` when no media waits. A low-rate cluster (a periodic probe at 2 × 150 kbit/s
    /// needs 5 packets and 560 bytes) gets padding-only packets of its share, as libwebrtc sizes its padding
    /// to the probe: five 1.2 kB copies would queue 160 ms in a 300 kbit/s link and be read as over-use.
    mutating func probePadding(for cluster: ProbeCluster) -> RTPPacket? {
        let share = cluster.minBytes / max(cluster.minPackets, 1)
        if share <= Self.smallProbeShareBytes { return nack?.paddingPacket(bytes: max(share, 32)) }
        return nack?.redundantPacket()
    }

    /// Whether ``probePadding(for:)`` can give a packet now.
    func canPad(_ cluster: ProbeCluster) -> Bool {
        cluster.minBytes / max(cluster.minPackets, 1) <= Self.smallProbeShareBytes
            ? nack?.canSendPadding == true : nack?.canSendRedundant == true
    }

    /// With an active probe cluster: its next packet's time when there is something to send, else its expiry.
    func probeDeadlineMicros(nowMicros now: UInt64) -> UInt64? {
        guard let cluster = probing.activeProbeCluster else { return nil }
        let expiry = UInt64(max(0, cluster.createdMicros + Self.probeTimeoutMicros + 1))
        guard !pacer.isEmpty || canPad(cluster) else { return expiry }
        return min(UInt64(max(0, probing.nextSendMicros(atMicros: Int64(clamping: now)))), expiry)
    }
}
