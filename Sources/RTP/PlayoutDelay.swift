/// The playout-delay RTP header extension (libwebrtc's
/// `http://www.webrtc.org/experiments/rtp-hdrext/playout-delay`, documented in webrtc's
/// `docs/native-code/rtp-hdrext/playout-delay/README.md`): the sender's bounds on how long the receiver may
/// hold a frame before showing it. In the RFC 8285 §4.2 one-byte form:
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ID   | len=2 |       MIN delay       |       MAX delay       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// MIN and MAX are 12-bit big-endian counts of 10 ms (0…4095, up to 40.95 s). MIN = MAX = 0 asks the
/// receiver to show each frame as soon as it is decoded (Chromium then skips its jitter buffer's smoothing).
public enum PlayoutDelay {
    /// The extension's URI in SDP (`a=extmap:<id> <uri>`).
    public static let uri = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
    /// Bytes of data in the element.
    public static let dataSize = 3
    /// The largest delay the 12-bit fields carry, in units of ``granularityMilliseconds``.
    public static let maximumUnits: UInt16 = 0x0FFF
    /// One unit of MIN/MAX, ms.
    public static let granularityMilliseconds = 10

    /// The bounds, in units of 10 ms.
    public struct Limits: Sendable, Equatable {
        public var minimumUnits: UInt16
        public var maximumUnits: UInt16

        /// - Throws: ``RTPError/malformed(_:_:)`` when a bound exceeds 4095 or MIN exceeds MAX.
        public init(minimumUnits: UInt16, maximumUnits: UInt16) throws(RTPError) {
            guard minimumUnits <= PlayoutDelay.maximumUnits, maximumUnits <= PlayoutDelay.maximumUnits else {
                throw .malformed(.headerExtension, "playout delay \(minimumUnits)…\(maximumUnits) × 10 ms exceeds 4095")
            }
            guard minimumUnits <= maximumUnits else {
                throw .malformed(.headerExtension, "playout delay minimum \(minimumUnits) above maximum \(maximumUnits)")
            }
            self.minimumUnits = minimumUnits
            self.maximumUnits = maximumUnits
        }

        /// MIN = MAX = 0: show at once.
        public static let immediate = try! Limits(minimumUnits: 0, maximumUnits: 0)

        /// The 3 data bytes: MIN in the top 12 bits, MAX in the low 12 (big-endian).
        public var bytes: [UInt8] {
            [UInt8(minimumUnits >> 4), UInt8(truncatingIfNeeded: minimumUnits << 4) | UInt8(maximumUnits >> 8),
             UInt8(truncatingIfNeeded: maximumUnits)]
        }
    }

    /// The element carrying `limits` under local identifier `id`.
    public static func element(id: UInt8, limits: Limits) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(id: id, data: limits.bytes[...])
    }

    /// The limits in `headerExtension` under `id`, or nil when there is no such element.
    /// - Throws: ``RTPError/malformed(_:_:)`` for an element of another size than 3 bytes or MIN above MAX,
    ///   or what ``RTPHeaderExtension/element(id:)`` throws for a malformed block.
    public static func read(from headerExtension: RTPHeaderExtension, id: UInt8) throws(RTPError) -> Limits? {
        guard let data = try headerExtension.element(id: id) else { return nil }
        guard data.count == dataSize else {
            throw .malformed(.headerExtension, "playout delay of \(data.count) bytes, expected 3")
        }
        let minimum = UInt16(data.u8(0)) << 4 | UInt16(data.u8(1) >> 4)
        let maximum = UInt16(data.u8(1) & 0x0F) << 8 | UInt16(data.u8(2))
        return try Limits(minimumUnits: minimum, maximumUnits: maximum)
    }
}
