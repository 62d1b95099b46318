import RTP
import XCTest

/// ``SplitMix64`` against the reference algorithm's known outputs (Steele, Lea, Flood 2014; the `splitmix64`
/// of Vigna's `xoroshiro` reference code): replayed dumps and seeded tests are only identical across platforms
/// and releases if these numbers never change.
final class SplitMix64Tests: XCTestCase {
    /// The first outputs for seed 0, as every reference implementation prints them.
    func testKnownAnswersForSeedZero() {
        var generator = SplitMix64(seed: 0)
        XCTAssertEqual((0..<3).map { _ in generator.next() }, [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    /// The state advances by the golden-ratio increment 0x9E3779B97F4A7C15 per output, so seeding with that
    /// increment skips exactly one output, and any seed's stream is a shifted copy of seed 0's.
    func testSeedsAreOffsetsOnOneStream() {
        var fromZero = SplitMix64(seed: 0)
        _ = fromZero.next()
        var skipped = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        XCTAssertEqual((0..<100).map { _ in fromZero.next() }, (0..<100).map { _ in skipped.next() })
        // Wrapping the 64-bit state is part of the algorithm, not an overflow.
        var wrapping = SplitMix64(seed: .max)
        XCTAssertNotEqual(wrapping.next(), wrapping.next())
    }

    /// Values drawn through the standard library's `random(in:using:)` are reproducible from the seed too —
    /// what the payloader's initial sequence number and PictureID come from.
    func testDrawnRangesAreReproducible() throws {
        func draw() throws -> (UInt16, UInt16) {
            var generator = SplitMix64(seed: 2024)
            let payloader = try VP8Payloader(ssrc: 1, payloadType: 96, using: &generator)
            return (payloader.nextSequenceNumber, payloader.nextPictureID)
        }
        let first = try draw(), second = try draw()
        XCTAssertEqual(first.0, second.0)
        XCTAssertEqual(first.1, second.1)
        XCTAssertLessThanOrEqual(first.1, 0x7FFF)
    }
}
