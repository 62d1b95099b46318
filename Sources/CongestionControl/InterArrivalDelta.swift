/// Groups packets into send bursts and yields, per completed group, how much later it arrived than it was
/// sent relative to the group before (draft-ietf-rmcat-gcc-02 §5.2; libwebrtc's `InterArrivalDelta`).
///
/// - A group holds the packets sent within ``groupLengthMicros`` (5 ms) of its first one.
/// - A packet sent later still joins the group when it arrived within ``burstDeltaMicros`` (5 ms) of the
///   group's last arrival *and* earlier than its send spacing predicts (it queued behind the group: one
///   burst through the bottleneck), as long as the group spans less than ``maxBurstMicros`` (100 ms) of
///   arrivals.
/// - A packet sent before the current group started is reordered and skipped.
/// - Deltas between the previous and the current group use each group's last send and last arrival times.
///   A negative arrival delta (groups reordered) yields nothing; ``reorderedResetThreshold`` in a row reset
///   the state. So does an arrival delta exceeding the local (feedback) time delta by
///   ``arrivalOffsetThresholdMicros`` (3 s): the receiver's clock jumped.
struct InterArrivalDelta: Sendable {
    static let groupLengthMicros: Int64 = 5_000
    static let burstDeltaMicros: Int64 = 5_000
    static let maxBurstMicros: Int64 = 100_000
    static let arrivalOffsetThresholdMicros: Int64 = 3_000_000
    static let reorderedResetThreshold = 3

    /// The deltas between two consecutive groups.
    struct Deltas: Sendable, Equatable {
        /// Last send time of this group minus that of the one before, µs.
        var sendDeltaMicros: Int64
        /// Last arrival of this group minus that of the one before, µs.
        var arrivalDeltaMicros: Int64
        /// Bytes of this group minus bytes of the one before.
        var sizeDelta: Int
    }

    private struct Group: Sendable {
        var firstSend: Int64
        var lastSend: Int64
        var firstArrival: Int64
        var lastArrival: Int64
        var lastLocalTime: Int64
        var size: Int
    }

    private var current: Group?
    private var previous: Group?
    private var reorderedInARow = 0

    /// Adds a received packet (send and arrival µs, the local time the feedback was read, its size) and
    /// returns the deltas when it completed a group that had a predecessor.
    mutating func add(sendMicros: Int64, arrivalMicros: Int64, localMicros: Int64, sizeBytes: Int) -> Deltas? {
        guard var group = current else {
            current = Group(firstSend: sendMicros, lastSend: sendMicros, firstArrival: arrivalMicros,
                            lastArrival: arrivalMicros, lastLocalTime: localMicros, size: sizeBytes)
            return nil
        }
        if sendMicros < group.firstSend { return nil }  // reordered in sending order

        var deltas: Deltas?
        if startsNewGroup(group, sendMicros: sendMicros, arrivalMicros: arrivalMicros) {
            if let previous {
                let sendDelta = group.lastSend - previous.lastSend
                let arrivalDelta = group.lastArrival - previous.lastArrival
                let localDelta = group.lastLocalTime - previous.lastLocalTime
                if arrivalDelta - localDelta >= Self.arrivalOffsetThresholdMicros {
                    reset()
                    return nil
                }
                if arrivalDelta < 0 {
                    reorderedInARow += 1
                    if reorderedInARow >= Self.reorderedResetThreshold { reset() }
                    return nil
                }
                reorderedInARow = 0
                deltas = Deltas(sendDeltaMicros: sendDelta, arrivalDeltaMicros: arrivalDelta, sizeDelta: group.size - previous.size)
            }
            previous = group
            group = Group(firstSend: sendMicros, lastSend: sendMicros, firstArrival: arrivalMicros,
                          lastArrival: arrivalMicros, lastLocalTime: localMicros, size: 0)
        } else {
            group.lastSend = max(group.lastSend, sendMicros)
        }
        group.size += sizeBytes
        group.lastArrival = arrivalMicros
        group.lastLocalTime = localMicros
        current = group
        return deltas
    }

    private func startsNewGroup(_ group: Group, sendMicros: Int64, arrivalMicros: Int64) -> Bool {
        if belongsToBurst(group, sendMicros: sendMicros, arrivalMicros: arrivalMicros) { return false }
        return sendMicros - group.firstSend > Self.groupLengthMicros
    }

    private func belongsToBurst(_ group: Group, sendMicros: Int64, arrivalMicros: Int64) -> Bool {
        let arrivalDelta = arrivalMicros - group.lastArrival
        let sendDelta = sendMicros - group.lastSend
        if sendDelta == 0 { return true }
        let propagationDelta = arrivalDelta - sendDelta
        return propagationDelta < 0 && arrivalDelta <= Self.burstDeltaMicros
            && arrivalMicros - group.firstArrival < Self.maxBurstMicros
    }

    mutating func reset() {
        current = nil
        previous = nil
        reorderedInARow = 0
    }
}
