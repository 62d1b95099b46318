/// What the path delivered while a probe cluster was in it, read from one feedback: the bytes received from
/// the first probe packet's arrival on (all packets, media and probe alike: a probe fills the link, so every
/// arrival counts), over the span of those arrivals. A cluster above the link's rate arrives at the link's
/// rate, so this is the capacity the over-use ran into.
///
/// It keeps an over-use that a probe caused from undercutting the link: GCC decreases to 0.85 × the
/// acknowledged rate (draft-ietf-rmcat-gcc-02 §5.5), which for an application-limited sender is its
/// encoder's output (~500 kbit/s for a screen on a 3 Mbit/s link), not what the path carries. Measured with
/// Chromium behind tbf (2026-12-05): each step-up run's probes were followed by an over-use dropping the
/// target to ~450 kbit/s.
enum ProbeDeliveryRate {
    /// Fewest packets counted from the first probe packet on (libwebrtc's probe clusters: at least 5).
    static let minPackets = 5
    /// Shortest span of their arrivals, µs: below it one clock tick of the receiver's 250 µs TWCC resolution
    /// is more than 2.5 % of the span.
    static let minSpanMicros: Int64 = 10_000

    /// Bits per second delivered from the first probe packet's arrival on in `received` (ordered by arrival,
    /// ``TransportPacketsFeedback/receivedByArrival``), or nil when no probe packet is there, when fewer than
    /// ``minPackets`` packets arrived from it on (itself included), or when their arrivals span less than
    /// ``minSpanMicros``. The first packet's bytes are not counted (they arrived at the start of the span,
    /// not during it).
    static func bitsPerSecond(_ received: [PacketResult]) -> Double? {
        guard let first = received.firstIndex(where: { $0.sent.probeClusterID != nil }),
              let start = received[first].arrivalMicros else { return nil }
        var bytes = 0
        var end = start
        for result in received[(first + 1)...] {
            guard let arrival = result.arrivalMicros else { continue }
            bytes += result.sent.sizeBytes
            end = arrival
        }
        let span = end - start
        guard received.count - first >= minPackets, span >= minSpanMicros else { return nil }
        return Double(bytes) * 8 * Units.microsPerSecond / Double(span)
    }
}
