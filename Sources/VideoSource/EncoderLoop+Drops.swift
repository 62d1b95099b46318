/// When libvpx may drop a new frame: its rate control drops after an overshoot (a keyframe, a burst of
/// changes), every new picture until its buffer refills — on a heavy screen at the frame-rate floor a run
/// of drops froze the viewers' picture for 0.9 s (measured below), close to a stall.
extension EncoderLoop {
    /// libvpx may drop a new frame (rate control after an overshoot) only while the viewers' picture is
    /// younger than this, µs: with the frame-rate floor's 200 ms to the next new frame, a run of drops then
    /// freezes the picture for about 0.6 s at most, under the 1 s a viewer counts as a stall.
    /// Measured (`DropFreezeTests`, 1080p text scrolling a line a frame at the call's 4977-kbps target):
    /// longest gap 899 ms without the limit, 433 ms with it; mean rate 5011 and 5019 kbps.
    static let longestDropGapMicros: UInt64 = 400_000

    /// How deep in debt the byte budget may be, in bucket capacities, for a drop to be refused: content
    /// that cannot fit its target at the frame-rate floor at all keeps libvpx's drops (a freeze, not an
    /// overshoot a constrained link would pay for with loss).
    static let dropRefusalDebtShare = 2.0

    /// Whether this new frame must be encoded whatever libvpx's buffer says: the last delivered frame is
    /// ``longestDropGapMicros`` old or more (nil: nothing delivered yet, drops allowed) and the byte
    /// budget holds more than −``dropRefusalDebtShare`` × its capacity.
    static func mustNotDrop(lastDeliveredMicros: UInt64?, now: UInt64, budget: ByteBudget) -> Bool {
        guard let last = lastDeliveredMicros, now > last, now - last >= longestDropGapMicros else { return false }
        return budget.balance(at: now) > -budget.capacityBits * dropRefusalDebtShare
    }
}
