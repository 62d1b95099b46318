// Network byte order (big-endian) reading and writing for the wire formats of this module.
// Readers assume the caller has checked the length first; every public parser does, and throws
// ``RTPError/truncated(_:needed:available:)`` otherwise.

extension ArraySlice<UInt8> {
    /// The byte at `offset` from the slice's start.
    @inline(__always)
    func u8(_ offset: Int) -> UInt8 { self[startIndex + offset] }

    /// The big-endian 16-bit value at `offset` from the slice's start.
    @inline(__always)
    func u16(_ offset: Int) -> UInt16 {
        UInt16(self[startIndex + offset]) << 8 | UInt16(self[startIndex + offset + 1])
    }

    /// The big-endian 24-bit value at `offset` from the slice's start.
    @inline(__always)
    func u24(_ offset: Int) -> UInt32 {
        UInt32(self[startIndex + offset]) << 16 | UInt32(self[startIndex + offset + 1]) << 8
            | UInt32(self[startIndex + offset + 2])
    }

    /// The big-endian 32-bit value at `offset` from the slice's start.
    @inline(__always)
    func u32(_ offset: Int) -> UInt32 {
        UInt32(self[startIndex + offset]) << 24 | UInt32(self[startIndex + offset + 1]) << 16
            | UInt32(self[startIndex + offset + 2]) << 8 | UInt32(self[startIndex + offset + 3])
    }

    /// The sub-slice `offset ..< offset + count`, relative to the slice's start.
    @inline(__always)
    func sub(_ offset: Int, _ count: Int) -> ArraySlice<UInt8> {
        self[(startIndex + offset) ..< (startIndex + offset + count)]
    }

    /// The sub-slice from `offset` to the end, relative to the slice's start.
    @inline(__always)
    func sub(from offset: Int) -> ArraySlice<UInt8> { self[(startIndex + offset)...] }
}

extension Array<UInt8> {
    @inline(__always)
    mutating func appendU16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    @inline(__always)
    mutating func appendU24(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    @inline(__always)
    mutating func appendU32(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Overwrites the big-endian 16-bit value at absolute index `index`.
    @inline(__always)
    mutating func setU16(_ value: UInt16, at index: Int) {
        self[index] = UInt8(truncatingIfNeeded: value >> 8)
        self[index + 1] = UInt8(truncatingIfNeeded: value)
    }

    /// Appends zero bytes until `count - start` is a multiple of 4.
    @inline(__always)
    mutating func padToWord(from start: Int) {
        while (count - start) % 4 != 0 { append(0) }
    }
}
