/// The RTP header extension block (RFC 3550 §5.3.1) with the general mechanism of RFC 8285.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      defined by profile       |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        header extension                       |
/// |                             ....                              |
/// ```
/// `length` counts 32-bit words after this first word. RFC 8285 §4.2, one-byte form (profile 0xBEDE):
/// ```
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |       0xBE    |    0xDE       |           length=3            |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |  ID   | L=0   |     data      |  ID   |  L=1  |   data...
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       ...data   |    0 (pad)    |    0 (pad)    |  ID   | L=3   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                          data                                 |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// (an element carries L+1 data bytes; ID 0 bytes are padding; ID 15 ends parsing). §4.3, two-byte form
/// (profile 0x100 << 4 | appbits): each element is `ID (8 bits) | L (8 bits) | L data bytes`, ID 0 bytes
/// are padding.
public struct RTPHeaderExtension: Sendable, Equatable {
    /// The 16-bit "defined by profile" field: 0xBEDE one-byte, 0x1000…0x100F two-byte, anything else opaque.
    public var profile: UInt16
    /// The extension body: `length × 4` bytes after the first word.
    public var data: ArraySlice<UInt8>

    /// The RFC 8285 one-byte form's profile value.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// The RFC 8285 two-byte form's profile value (with appbits 0).
    public static let twoByteProfile: UInt16 = 0x1000

    public init(profile: UInt16, data: ArraySlice<UInt8>) {
        self.profile = profile
        self.data = data
    }

    /// True for the RFC 8285 one-byte form.
    public var isOneByte: Bool { profile == Self.oneByteProfile }
    /// True for the RFC 8285 two-byte form.
    public var isTwoByte: Bool { profile & 0xFFF0 == Self.twoByteProfile }

    /// The RFC 8285 elements in order (padding skipped); empty for a profile other than the two of RFC 8285.
    /// Element data are slices of ``data`` (no copy).
    public func elements() throws(RTPError) -> [RTPHeaderExtensionElement] {
        var result: [RTPHeaderExtensionElement] = []
        try forEachElement { result.append($0) }
        return result
    }

    /// The data of the element with local identifier `id`, or nil.
    public func element(id: UInt8) throws(RTPError) -> ArraySlice<UInt8>? {
        var found: ArraySlice<UInt8>?
        try forEachElement { element in
            if found == nil, element.id == id { found = element.data }
        }
        return found
    }

    /// Calls `body` for each RFC 8285 element, in order, without allocating.
    public func forEachElement(_ body: (RTPHeaderExtensionElement) -> Void) throws(RTPError) {
        if isOneByte {
            var offset = 0
            while offset < data.count {
                let byte = data.u8(offset)
                let id = byte >> 4
                if id == 0 {
                    guard byte == 0 else { throw .malformed(.headerExtension, "one-byte element with ID 0, L \(byte & 0x0F)") }
                    offset += 1
                    continue
                }
                if id == 15 { return }  // RFC 8285 §4.2: reserved, stop processing.
                let length = Int(byte & 0x0F) + 1
                guard offset + 1 + length <= data.count else {
                    throw .truncated(.headerExtension, needed: offset + 1 + length, available: data.count)
                }
                body(RTPHeaderExtensionElement(id: id, data: data.sub(offset + 1, length)))
                offset += 1 + length
            }
        } else if isTwoByte {
            var offset = 0
            while offset < data.count {
                let id = data.u8(offset)
                if id == 0 {
                    offset += 1
                    continue
                }
                guard offset + 2 <= data.count else {
                    throw .truncated(.headerExtension, needed: offset + 2, available: data.count)
                }
                let length = Int(data.u8(offset + 1))
                guard offset + 2 + length <= data.count else {
                    throw .truncated(.headerExtension, needed: offset + 2 + length, available: data.count)
                }
                body(RTPHeaderExtensionElement(id: id, data: data.sub(offset + 2, length)))
                offset += 2 + length
            }
        }
    }

    /// Builds an extension block from elements: the one-byte form when every ID is 1…14 and every element
    /// holds 1…16 bytes, otherwise the two-byte form (IDs 1…255, 0…255 bytes); padded with zero bytes to a
    /// multiple of 4.
    public init(elements: [RTPHeaderExtensionElement]) throws(RTPError) {
        let oneByte = elements.allSatisfy { (1...14).contains($0.id) && (1...16).contains($0.data.count) }
        var body: [UInt8] = []
        if oneByte {
            for element in elements {
                body.append(element.id << 4 | UInt8(element.data.count - 1))
                body.append(contentsOf: element.data)
            }
        } else {
            for element in elements {
                guard element.id != 0 else { throw .malformed(.headerExtension, "element ID 0") }
                guard element.data.count <= 255 else {
                    throw .tooMany(.headerExtension, count: element.data.count, limit: 255)
                }
                body.append(element.id)
                body.append(UInt8(element.data.count))
                body.append(contentsOf: element.data)
            }
        }
        body.padToWord(from: 0)
        guard body.count / 4 <= Int(UInt16.max) else {
            throw .tooMany(.headerExtension, count: body.count / 4, limit: Int(UInt16.max))
        }
        self.init(profile: oneByte ? Self.oneByteProfile : Self.twoByteProfile, data: body[...])
    }
}

extension RTPHeaderExtension {
    /// `block` with `element` added after its elements in the RFC 8285 §4.2 one-byte form (a new block when
    /// `block` is nil), without parsing the others into an array: one allocation for the new data, padded
    /// with zero bytes to a multiple of 4. For the per-packet path (TWCC numbers, playout delay).
    /// - Throws: ``RTPError/malformed(_:_:)`` when `element` does not fit the one-byte form (ID 1…14, 1…16
    ///   bytes), when `block` is not in the one-byte form, or already holds an element with that ID or the
    ///   reserved ID 15 (elements after it would be ignored); ``RTPError/truncated(_:needed:available:)`` for a
    ///   malformed block.
    public static func appendingOneByte(
        _ element: RTPHeaderExtensionElement, to block: RTPHeaderExtension?
    ) throws(RTPError) -> RTPHeaderExtension {
        guard (1...14).contains(element.id), (1...16).contains(element.data.count) else {
            throw .malformed(.headerExtension, "element ID \(element.id) with \(element.data.count) bytes does not fit the one-byte form")
        }
        var end = 0
        if let block {
            guard block.isOneByte else { throw .malformed(.headerExtension, "profile 0x\(String(block.profile, radix: 16)) is not the one-byte form") }
            let data = block.data
            var offset = 0
            while offset < data.count {
                let byte = data.u8(offset)
                let id = byte >> 4
                if id == 0 {
                    guard byte == 0 else { throw .malformed(.headerExtension, "one-byte element with ID 0, L \(byte & 0x0F)") }
                    offset += 1
                    continue
                }
                guard id != 15 else { throw .malformed(.headerExtension, "ID 15 ends the block: nothing can follow it") }
                guard id != element.id else { throw .malformed(.headerExtension, "element ID \(id) is already present") }
                let length = Int(byte & 0x0F) + 1
                guard offset + 1 + length <= data.count else {
                    throw .truncated(.headerExtension, needed: offset + 1 + length, available: data.count)
                }
                offset += 1 + length
                end = offset
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((end + 1 + element.data.count + 3) & ~3)
        if let block { bytes.append(contentsOf: block.data.prefix(end)) }
        bytes.append(element.id << 4 | UInt8(element.data.count - 1))
        bytes.append(contentsOf: element.data)
        bytes.padToWord(from: 0)
        return RTPHeaderExtension(profile: oneByteProfile, data: bytes[...])
    }
}

/// One RFC 8285 header extension element: its local identifier (negotiated with `a=extmap`) and data.
public struct RTPHeaderExtensionElement: Sendable, Equatable {
    /// Local identifier: 1…14 in the one-byte form, 1…255 in the two-byte form.
    public var id: UInt8
    public var data: ArraySlice<UInt8>

    public init(id: UInt8, data: ArraySlice<UInt8>) {
        self.id = id
        self.data = data
    }
}
