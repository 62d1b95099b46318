/// Arithmetic on 16-bit RTP sequence numbers, which wrap from 65535 to 0 (RFC 3550 §5.1, and the
/// comparison of RFC 1982 serial numbers with SERIAL_BITS = 16).
public enum SequenceNumber {
    /// The signed distance from `a` to `b` along the shortest way round the circle, in −32768…32767:
    /// `distance(from: 65535, to: 1) == 2`, `distance(from: 1, to: 65535) == −2`.
    @inline(__always)
    public static func distance(from a: UInt16, to b: UInt16) -> Int {
        Int(Int16(bitPattern: b &- a))
    }

    /// True when `a` comes before `b` in sending order (modulo 2¹⁶; `b` is less than half the circle ahead).
    @inline(__always)
    public static func isBefore(_ a: UInt16, _ b: UInt16) -> Bool { distance(from: a, to: b) > 0 }

    /// True when `a` is the same as or comes after `b`.
    @inline(__always)
    public static func isAtOrAfter(_ a: UInt16, _ b: UInt16) -> Bool { distance(from: b, to: a) >= 0 }
}

/// Turns the 16-bit sequence numbers of one stream into 64-bit ever-increasing ones, the "extended
/// sequence number" of RFC 3550 §6.4.1 / Appendix A.1 (cycles × 65536 + sequence number).
///
/// Each number is placed at the position nearest the highest number seen so far, so reordering and
/// loss of up to 32767 packets are handled; the first number seen is taken as is (cycle 0).
public struct SequenceNumberUnwrapper: Sendable {
    /// The highest extended number seen, or nil before the first.
    public private(set) var highest: Int64?

    public init() {}

    /// The extended form of `sequenceNumber`; moves ``highest`` when it is newer. May be negative for a
    /// packet reordered before the very first one seen.
    public mutating func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        guard let highest else {
            self.highest = Int64(sequenceNumber)
            return Int64(sequenceNumber)
        }
        let last = UInt16(truncatingIfNeeded: highest)
        let extended = highest + Int64(SequenceNumber.distance(from: last, to: sequenceNumber))
        if extended > highest { self.highest = extended }
        return extended
    }

    /// The extended form `sequenceNumber` would get, without recording it.
    public func peek(_ sequenceNumber: UInt16) -> Int64 {
        guard let highest else { return Int64(sequenceNumber) }
        let last = UInt16(truncatingIfNeeded: highest)
        return highest + Int64(SequenceNumber.distance(from: last, to: sequenceNumber))
    }
}
