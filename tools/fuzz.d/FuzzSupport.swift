// Shared by every fuzz target (tools/fuzz compiles it beside the target's entry file): the libFuzzer entry
// point, a reader that turns the fuzz input's leading bytes into choices, and byte comparison.
import Glibc

/// libFuzzer calls this once per input (LLVM libFuzzer's `LLVMFuzzerTestOneInput` contract: return 0;
/// a property that fails aborts, which libFuzzer records as a crash with the input).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data!, count: size))
    fuzzOne(bytes)
    return 0
}

/// Fails the input: prints what broke, then traps (libFuzzer writes the input as a crash artifact).
func violated(_ property: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz property violated: \(property)", file: file, line: line)
}

/// Checks one property of the code under test.
@inline(__always)
func check(_ condition: Bool, _ property: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition { violated(property(), file: file, line: line) }
}

/// Reads choices off the front of the input; past its end every read gives 0 (so short inputs are valid).
struct FuzzInput {
    let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }
    var remaining: Int { max(0, bytes.count - position) }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Big-endian, as on the wire.
    mutating func u16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    mutating func u32() -> UInt32 { UInt32(u16()) << 16 | UInt32(u16()) }

    /// Up to `count` bytes (fewer at the end).
    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, position + max(0, count))
        defer { position = max(position, end) }
        return position < end ? bytes[position..<end] : []
    }

    /// Everything not read yet.
    mutating func rest() -> ArraySlice<UInt8> { take(remaining) }
}

/// Whether two byte sequences are equal, by memcmp: a generic `==` on bytes compiled into a target compares
/// element by element, and under the fuzzer's comparison tracing each byte costs a callback (in rtp-vp8,
/// comparing packets' payloads was a third of every run).
func sameBytes(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    let result = a.withContiguousStorageIfAvailable { x in
        b.withContiguousStorageIfAvailable { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
    }
    if let result, let equal = result { return equal }
    return a.elementsEqual(b)
}
