/// A token bucket at the encoder's target (sans-I/O: the caller passes the time). Every encoded byte is
/// spent from it (new frames, refinements, repeats, keyframes); idle re-encodes wait while it is empty, so
/// what libvpx's own rate control does not see coming (a refinement under a forced quantizer ceiling, a
/// repeat) cannot push the output over the target.
///
/// It fills at `rateKbps` up to `burstMicros` of the target; spending may take it below zero (a frame is
/// never cut), and it then refills from there. Over any window of W µs the bytes spent are at most
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

    /// When the bucket will hold `bits` (at least `now`), µs.
    func time(holding bits: Double, after now: UInt64) -> UInt64 {
        let missing = min(bits, capacityBits) - balance(at: now)
        guard missing > 0 else { return now }
        return now + UInt64((missing * 1000 / Double(rateKbps)).rounded(.up))
    }
}
