/// A token bucket at the encoder's target (sans-I/O: the caller passes the time). Every encoded byte is
/// spent from it (new frames, refinements, repeats, keyframes); idle re-encodes wait while it is empty, so
/// what libvpx's own rate control does not see coming (a refinement under a forced quantizer ceiling, a
/// repeat) cannot push the output over the target.
///
/// It fills at `rateKbps` up to `burstMicros` of the target; spending may take it below zero (a frame is
/// never cut), and it then refills from there. A debt over ``debtAllowanceMicros`` of the target holds every
/// encode, new frames too (``overdrawnUntil(now:allowanceMicros:)``): on content whose frames cost more at
/// libvpx's worst quantizer than the target carries, libvpx's own drops still left twice the target (a
/// 720p terminal scrolling at 200 kbit/s: a 40 kB frame a second), and the pacer's queue then grew until
/// frames were thinned and keyframes asked for. Over any window of W µs the bytes spent are at most
/// `burst + W × rate + (the largest frame spent while the bucket held anything)`.
struct ByteBudget: Sendable, Equatable {
    /// The fill rate, kbps (1000 bits per second).
    private(set) var rateKbps: Int
    /// The most it holds, in µs of the target.
    let burstMicros: UInt64
    /// Bits held now (negative: in debt).
    private(set) var balanceBits: Double
    private var updatedAt: UInt64?

    /// A full bucket of `burstMicros` at `rateKbps`.
    init(rateKbps: Int, burstMicros: UInt64 = 250_000) {
        self.rateKbps = max(1, rateKbps)
        self.burstMicros = burstMicros
        balanceBits = Double(max(1, rateKbps)) * Double(burstMicros) / 1000
    }

    /// The most the bucket holds, bits.
    var capacityBits: Double { Double(rateKbps) * Double(burstMicros) / 1000 }

    /// Adds what `rateKbps` gave since the last call (time going backwards adds nothing).
    mutating func refill(now: UInt64) {
        if let last = updatedAt, now > last {
            balanceBits = min(capacityBits, balanceBits + Double(rateKbps) * Double(now - last) / 1000)
        }
        updatedAt = max(updatedAt ?? now, now)
    }

    /// Spends `bytes` at `now`.
    mutating func spend(bytes: Int, now: UInt64) {
        refill(now: now)
        balanceBits -= Double(bytes) * 8
    }

    /// A new target; what is held is clamped to the new capacity (a fall keeps any debt).
    mutating func setRate(kbps: Int, now: UInt64) {
        refill(now: now)
        rateKbps = max(1, kbps)
        balanceBits = min(balanceBits, capacityBits)
    }

    /// True when the bucket holds anything at `now`.
    func hasBytes(now: UInt64) -> Bool { balance(at: now) > 0 }

    /// The balance `now` would see, bits.
    func balance(at now: UInt64) -> Double {
        guard let last = updatedAt, now > last else { return balanceBits }
        return min(capacityBits, balanceBits + Double(rateKbps) * Double(now - last) / 1000)
    }

    /// The debt, in µs of the target, past which nothing is encoded (1 s: libvpx evens out a keyframe or a
    /// burst within about that, so only an overshoot it cannot correct is held).
    static let debtAllowanceMicros: UInt64 = 1_000_000

    /// When the debt will be back within `allowanceMicros` of the target, µs; nil when it is now.
    func overdrawnUntil(now: UInt64, allowanceMicros: UInt64 = ByteBudget.debtAllowanceMicros) -> UInt64? {
        let floorBits = -Double(rateKbps) * Double(allowanceMicros) / 1000
        let missing = floorBits - balance(at: now)
        guard missing > 0 else { return nil }
        return now + max(1, UInt64((missing * 1000 / Double(rateKbps)).rounded(.up)))
    }

    /// When the bucket will hold `bits` (at least `now`), µs.
    func time(holding bits: Double, after now: UInt64) -> UInt64 {
        let missing = min(bits, capacityBits) - balance(at: now)
        guard missing > 0 else { return now }
        return now + UInt64((missing * 1000 / Double(rateKbps)).rounded(.up))
    }
}
