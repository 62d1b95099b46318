import RTP

/// The tests' seeded random generator: RTP's SplitMix64 (the one the library uses for SSRCs and sequence
/// numbers), so every "random" chunking, loss pattern or byte sequence is reproducible from its seed.
public typealias SeededGenerator = SplitMix64
