/// Source Description, PT = 202 (RFC 3550 §6.5): text items per source, chiefly CNAME.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    SC   |  PT=SDES=202  |             length            |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// chunk  |                          SSRC/CSRC_1                          |
///   1    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                           SDES items                          |
///        |                              ...                              |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
/// Each item is `type (8) | length (8) | text (length bytes, UTF-8)`; a chunk's items end with one or
/// more zero bytes, up to the next 32-bit boundary (§6.5). CNAME is type 1 (§6.5.1):
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |    CNAME=1    |     length    | user and domain name        ...
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct RTCPSourceDescription: Sendable, Equatable {
    /// One SDES item.
    public struct Item: Sendable, Equatable {
        /// Item type: 1 CNAME, 2 NAME, 3 EMAIL, 4 PHONE, 5 LOC, 6 TOOL, 7 NOTE, 8 PRIV.
        public var type: UInt8
        /// The item's bytes (UTF-8 text), at most 255.
        public var value: [UInt8]

        public static let cnameType: UInt8 = 1

        public init(type: UInt8, value: [UInt8]) {
            self.type = type
            self.value = value
        }

        public init(type: UInt8, text: String) { self.init(type: type, value: Array(text.utf8)) }

        /// The value decoded as UTF-8 (invalid sequences replaced).
        public var text: String { String(decoding: value, as: UTF8.self) }
    }

    /// The items about one source.
    public struct Chunk: Sendable, Equatable {
        public var ssrc: UInt32
        public var items: [Item]

        public init(ssrc: UInt32, items: [Item]) {
            self.ssrc = ssrc
            self.items = items
        }
    }

    /// At most 31 chunks.
    public var chunks: [Chunk]

    public init(chunks: [Chunk]) { self.chunks = chunks }

    /// One chunk holding one CNAME item.
    public init(ssrc: UInt32, cname: String) {
        chunks = [Chunk(ssrc: ssrc, items: [Item(type: Item.cnameType, text: cname)])]
    }

    /// The CNAME of `ssrc`, if a chunk gives one.
    public func cname(of ssrc: UInt32) -> String? {
        chunks.first { $0.ssrc == ssrc }?.items.first { $0.type == Item.cnameType }?.text
    }

    init(count: UInt8, body: ArraySlice<UInt8>) throws(RTPError) {
        var chunks: [Chunk] = []
        var offset = 0
        for _ in 0..<count {
            guard body.count >= offset + 4 else {
                throw .truncated(.sourceDescription, needed: offset + 8, available: body.count + 4)
            }
            var chunk = Chunk(ssrc: body.u32(offset), items: [])
            offset += 4
            while true {
                guard offset < body.count else {
                    throw .truncated(.sourceDescription, needed: offset + 5, available: body.count + 4)
                }
                let type = body.u8(offset)
                if type == 0 {
                    // End of items: skip the null byte(s) to the next 32-bit boundary.
                    offset = (offset / 4 + 1) * 4
                    break
                }
                guard offset + 2 <= body.count else {
                    throw .truncated(.sourceDescription, needed: offset + 6, available: body.count + 4)
                }
                let length = Int(body.u8(offset + 1))
                guard offset + 2 + length <= body.count else {
                    throw .truncated(.sourceDescription, needed: offset + 6 + length, available: body.count + 4)
                }
                chunk.items.append(Item(type: type, value: Array(body.sub(offset + 2, length))))
                offset += 2 + length
            }
            guard offset <= body.count else {
                throw .truncated(.sourceDescription, needed: offset + 4, available: body.count + 4)
            }
            chunks.append(chunk)
        }
        self.chunks = chunks
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard chunks.count <= 31 else { throw .tooMany(.sourceDescription, count: chunks.count, limit: 31) }
        let start = buffer.beginRTCPPacket(count: UInt8(chunks.count), type: RTCPPacket.PacketType.sourceDescription)
        for chunk in chunks {
            let chunkStart = buffer.count
            buffer.appendU32(chunk.ssrc)
            for item in chunk.items {
                guard item.type != 0, item.value.count <= 255 else {
                    buffer.removeSubrange(start...)
                    throw item.type == 0
                        ? .malformed(.sourceDescription, "item type 0")
                        : .tooMany(.sourceDescription, count: item.value.count, limit: 255)
                }
                buffer.append(item.type)
                buffer.append(UInt8(item.value.count))
                buffer.append(contentsOf: item.value)
            }
            buffer.append(0)  // end of items, then pad to the boundary
            buffer.padToWord(from: chunkStart)
        }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}

/// Goodbye, PT = 203 (RFC 3550 §6.6): sources leaving, with an optional reason.
///
/// ```
///        0                   1                   2                   3
///        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |V=2|P|    SC   |   PT=BYE=203  |             length            |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |                           SSRC/CSRC                           |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       :                              ...                              :
///       +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// (opt) |     length    |               reason for leaving            ...
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct RTCPGoodbye: Sendable, Equatable {
    /// At most 31.
    public var ssrcs: [UInt32]
    /// UTF-8, at most 255 bytes; nil when absent.
    public var reason: String?

    public init(ssrcs: [UInt32], reason: String? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }

    init(count: UInt8, body: ArraySlice<UInt8>) throws(RTPError) {
        let needed = 4 * Int(count)
        guard body.count >= needed else { throw .truncated(.goodbye, needed: needed + 4, available: body.count + 4) }
        ssrcs = (0..<Int(count)).map { body.u32(4 * $0) }
        if body.count > needed {
            let length = Int(body.u8(needed))
            guard body.count >= needed + 1 + length else {
                throw .truncated(.goodbye, needed: needed + 5 + length, available: body.count + 4)
            }
            reason = String(decoding: body.sub(needed + 1, length), as: UTF8.self)
        } else {
            reason = nil
        }
    }

    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard ssrcs.count <= 31 else { throw .tooMany(.goodbye, count: ssrcs.count, limit: 31) }
        let reasonBytes = reason.map { Array($0.utf8) }
        if let reasonBytes, reasonBytes.count > 255 { throw .tooMany(.goodbye, count: reasonBytes.count, limit: 255) }
        let start = buffer.beginRTCPPacket(count: UInt8(ssrcs.count), type: RTCPPacket.PacketType.goodbye)
        for ssrc in ssrcs { buffer.appendU32(ssrc) }
        if let reasonBytes {
            buffer.append(UInt8(reasonBytes.count))
            buffer.append(contentsOf: reasonBytes)
        }
        try buffer.finishRTCPPacket(startingAt: start)
    }
}
