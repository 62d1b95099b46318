/// A small, fast, seedable random number generator (SplitMix64, Steele/Lea/Flood 2014), for the values
/// RFC 3550 asks to be random — SSRCs, initial sequence numbers and timestamps, picture IDs — and for
/// tests. The same seed gives the same sequence on every platform, so a replay yields identical bytes.
/// Not cryptographically secure: ICE passwords and the like need a secure generator.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `SystemRandomNumberGenerator` (the system's secure source) with one byte of storage, so that `&generator`
/// names a real address. ThreadSanitizer builds of Swift 6.3.1 instrument the inout access to the empty
/// system generator with whatever is in a register as its address and crash there (SEGV in
/// `__tsan::ExternalAccess`, seen in every `PeerConnection.answering` of a `--sanitize thread` build).
public struct SecureRandomNumberGenerator: RandomNumberGenerator, Sendable {
    private var system = SystemRandomNumberGenerator()
    private var addressable: UInt8 = 0

    public init() {}

    public mutating func next() -> UInt64 { system.next() }
}
