/// DTLS 1.2 records as bytes (RFC 6347 §4.1), for tests that feed endpoints what a network could:
///
/// ```
///  type (1) | version (2, 0xFEFD = DTLS 1.2) | epoch (2) | sequence number (6) | length (2) | body
/// ```
public enum DTLSRecordBytes {
    /// One record: application data (23) of epoch 1 unless told, big-endian fields.
    public static func record(
        type: UInt8 = 23, version: UInt16 = 0xFEFD, epoch: UInt16 = 1, sequence: UInt64 = 0x1000, body: [UInt8]
    ) -> [UInt8] {
        var bytes: [UInt8] = [type, UInt8(version >> 8), UInt8(version & 0xFF), UInt8(epoch >> 8), UInt8(epoch & 0xFF)]
        bytes += (0..<6).reversed().map { UInt8(truncatingIfNeeded: sequence >> (8 * UInt64($0))) }
        bytes += [UInt8(body.count >> 8), UInt8(body.count & 0xFF)]
        return bytes + body
    }

    /// `count` bytes of no meaning.
    public static func filler(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) } }
}

/// A test's own failure, with what went wrong.
public struct ICETestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
