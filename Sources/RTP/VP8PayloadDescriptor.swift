/// The VP8 payload descriptor at the start of every VP8 RTP payload (RFC 7741 §4.2).
///
/// ```
///       0 1 2 3 4 5 6 7
///      +-+-+-+-+-+-+-+-+
///      |X|R|N|S|R| PID | (REQUIRED)
///      +-+-+-+-+-+-+-+-+
/// X:   |I|L|T|K| RSV   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// I:   |M| PictureID   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
///      |   PictureID   | (present when M = 1: 15-bit PictureID)
///      +-+-+-+-+-+-+-+-+
/// L:   |   TL0PICIDX   | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// T/K: |TID|Y| KEYIDX  | (OPTIONAL)
///      +-+-+-+-+-+-+-+-+
/// ```
/// X: extended control bits present; N: non-reference frame; S: start of a VP8 partition; PID: partition
/// index. I/L/T/K: PictureID, TL0PICIDX, TID/Y, KEYIDX present. The first packet of a frame has S = 1 and
/// PID = 0.
public struct VP8PayloadDescriptor: Sendable, Equatable {
    /// N: the frame can be discarded without affecting any other frame.
    public var nonReference: Bool
    /// S: this packet starts a VP8 partition.
    public var startOfPartition: Bool
    /// PID: partition index, 0…7.
    public var partitionIndex: UInt8
    /// PictureID: 7 bits (0…127) or 15 bits (0…32767) as ``pictureIDIs15Bit`` says; nil when absent.
    public var pictureID: UInt16?
    /// M: the PictureID field is 15 bits long.
    public var pictureIDIs15Bit: Bool
    /// TL0PICIDX, when L = 1.
    public var tl0PictureIndex: UInt8?
    /// TID (2 bits) and Y (layer sync), when T = 1.
    public var temporalLayer: (id: UInt8, sync: Bool)?
    /// KEYIDX (5 bits), when K = 1.
    public var keyIndex: UInt8?

    public init(
        nonReference: Bool = false, startOfPartition: Bool, partitionIndex: UInt8 = 0, pictureID: UInt16? = nil,
        pictureIDIs15Bit: Bool = true, tl0PictureIndex: UInt8? = nil, temporalLayer: (id: UInt8, sync: Bool)? = nil,
        keyIndex: UInt8? = nil
    ) {
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex
        self.pictureID = pictureID
        self.pictureIDIs15Bit = pictureIDIs15Bit
        self.tl0PictureIndex = tl0PictureIndex
        self.temporalLayer = temporalLayer
        self.keyIndex = keyIndex
    }

    /// True for the first packet of a frame: S = 1 and PID = 0.
    public var isFrameStart: Bool { startOfPartition && partitionIndex == 0 }

    /// Bytes of the descriptor.
    public var size: Int {
        let hasExtension = pictureID != nil || tl0PictureIndex != nil || temporalLayer != nil || keyIndex != nil
        guard hasExtension else { return 1 }
        var size = 2
        if pictureID != nil { size += pictureIDIs15Bit ? 2 : 1 }
        if tl0PictureIndex != nil { size += 1 }
        if temporalLayer != nil || keyIndex != nil { size += 1 }
        return size
    }

    /// Parses the descriptor at the start of `payload`; returns it and its size in bytes (the VP8 data
    /// follows). A descriptor that leaves no VP8 data is refused (RFC 7741 §4.2: payloads are non-empty).
    public static func parse(_ payload: ArraySlice<UInt8>) throws(RTPError) -> (VP8PayloadDescriptor, size: Int) {
        guard payload.count >= 1 else { throw .truncated(.vp8Descriptor, needed: 1, available: 0) }
        let first = payload.u8(0)
        var descriptor = VP8PayloadDescriptor(
            nonReference: first & 0x20 != 0, startOfPartition: first & 0x10 != 0, partitionIndex: first & 0x07)
        var offset = 1
        if first & 0x80 != 0 {
            guard payload.count >= 2 else { throw .truncated(.vp8Descriptor, needed: 2, available: payload.count) }
            let ext = payload.u8(1)
            offset = 2
            if ext & 0x80 != 0 {  // I
                guard payload.count >= offset + 1 else {
                    throw .truncated(.vp8Descriptor, needed: offset + 1, available: payload.count)
                }
                let high = payload.u8(offset)
                if high & 0x80 != 0 {
                    guard payload.count >= offset + 2 else {
                        throw .truncated(.vp8Descriptor, needed: offset + 2, available: payload.count)
                    }
                    descriptor.pictureID = UInt16(high & 0x7F) << 8 | UInt16(payload.u8(offset + 1))
                    descriptor.pictureIDIs15Bit = true
                    offset += 2
                } else {
                    descriptor.pictureID = UInt16(high)
                    descriptor.pictureIDIs15Bit = false
                    offset += 1
                }
            }
            if ext & 0x40 != 0 {  // L
                guard payload.count >= offset + 1 else {
                    throw .truncated(.vp8Descriptor, needed: offset + 1, available: payload.count)
                }
                descriptor.tl0PictureIndex = payload.u8(offset)
                offset += 1
            }
            if ext & 0x30 != 0 {  // T or K share one byte
                guard payload.count >= offset + 1 else {
                    throw .truncated(.vp8Descriptor, needed: offset + 1, available: payload.count)
                }
                let byte = payload.u8(offset)
                if ext & 0x20 != 0 { descriptor.temporalLayer = (byte >> 6, byte & 0x20 != 0) }
                if ext & 0x10 != 0 { descriptor.keyIndex = byte & 0x1F }
                offset += 1
            }
        }
        guard payload.count > offset else { throw .truncated(.vp8Descriptor, needed: offset + 1, available: payload.count) }
        return (descriptor, offset)
    }

    /// Appends the descriptor's bytes (the X byte only when an optional field is present).
    public func serialize(into buffer: inout [UInt8]) {
        let hasExtension = pictureID != nil || tl0PictureIndex != nil || temporalLayer != nil || keyIndex != nil
        var first: UInt8 = partitionIndex & 0x07
        if hasExtension { first |= 0x80 }
        if nonReference { first |= 0x20 }
        if startOfPartition { first |= 0x10 }
        buffer.append(first)
        guard hasExtension else { return }
        var ext: UInt8 = 0
        if pictureID != nil { ext |= 0x80 }
        if tl0PictureIndex != nil { ext |= 0x40 }
        if temporalLayer != nil { ext |= 0x20 }
        if keyIndex != nil { ext |= 0x10 }
        buffer.append(ext)
        if let pictureID {
            if pictureIDIs15Bit {
                buffer.append(0x80 | UInt8(truncatingIfNeeded: pictureID >> 8) & 0x7F)
                buffer.append(UInt8(truncatingIfNeeded: pictureID))
            } else {
                buffer.append(UInt8(truncatingIfNeeded: pictureID) & 0x7F)
            }
        }
        if let tl0PictureIndex { buffer.append(tl0PictureIndex) }
        if temporalLayer != nil || keyIndex != nil {
            var byte: UInt8 = 0
            if let temporalLayer { byte |= (temporalLayer.id & 0x03) << 6 | (temporalLayer.sync ? 0x20 : 0) }
            if let keyIndex { byte |= keyIndex & 0x1F }
            buffer.append(byte)
        }
    }

    public static func == (a: VP8PayloadDescriptor, b: VP8PayloadDescriptor) -> Bool {
        a.nonReference == b.nonReference && a.startOfPartition == b.startOfPartition
            && a.partitionIndex == b.partitionIndex && a.pictureID == b.pictureID
            && (a.pictureID == nil || a.pictureIDIs15Bit == b.pictureIDIs15Bit)
            && a.tl0PictureIndex == b.tl0PictureIndex && a.temporalLayer?.id == b.temporalLayer?.id
            && a.temporalLayer?.sync == b.temporalLayer?.sync && a.keyIndex == b.keyIndex
    }
}

/// The first bytes of a VP8 frame, which start the payload of the packet with S = 1, PID = 0
/// (RFC 7741 §4.3; RFC 6386 §9.1).
///
/// ```
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// |Size0|H| VER |P|
/// +-+-+-+-+-+-+-+-+
/// |     Size1     |
/// +-+-+-+-+-+-+-+-+
/// |     Size2     |
/// +-+-+-+-+-+-+-+-+
/// | Bytes 4..N of |   key frames only (P = 0): start code 9d 01 2a,
/// | VP8 payload   |   then 14-bit width + 2-bit scale, 14-bit height + 2-bit scale,
/// :               :   each little-endian
/// ```
/// P is the inverse key frame flag: 0 for a key frame. H: show_frame. Size: the first partition's length,
/// Size0 + 8 × Size1 + 2048 × Size2.
public struct VP8FrameHeader: Sendable, Equatable {
    public var isKeyframe: Bool
    /// VER, 0…7.
    public var version: UInt8
    /// H: the frame is meant to be shown.
    public var showFrame: Bool
    /// Bytes of the first partition.
    public var firstPartitionSize: Int
    /// Key frames only: width and height in pixels (the low 14 bits; scaling bits dropped).
    public var width: Int?
    public var height: Int?

    /// Reads the header at the start of a VP8 frame (the data after the descriptor of a frame's first
    /// packet). Needs 3 bytes, and 10 for a key frame, whose start code is checked.
    public init(parsing frame: ArraySlice<UInt8>) throws(RTPError) {
        guard frame.count >= 3 else { throw .truncated(.vp8PayloadHeader, needed: 3, available: frame.count) }
        let tag = frame.u8(0)
        isKeyframe = tag & 0x01 == 0
        version = (tag >> 1) & 0x07
        showFrame = tag & 0x10 != 0
        firstPartitionSize = Int(tag >> 5) | Int(frame.u8(1)) << 3 | Int(frame.u8(2)) << 11
        guard isKeyframe else { return }
        guard frame.count >= 10 else { throw .truncated(.vp8PayloadHeader, needed: 10, available: frame.count) }
        guard frame.u8(3) == 0x9D, frame.u8(4) == 0x01, frame.u8(5) == 0x2A else {
            throw .malformed(.vp8PayloadHeader, "key frame without start code 9d 01 2a")
        }
        width = (Int(frame.u8(6)) | Int(frame.u8(7)) << 8) & 0x3FFF
        height = (Int(frame.u8(8)) | Int(frame.u8(9)) << 8) & 0x3FFF
    }

    /// True when the VP8 data starting a frame is a key frame: P bit of the first byte is 0 (RFC 7741 §4.3).
    /// False for empty data.
    public static func isKeyframe(_ frame: ArraySlice<UInt8>) -> Bool {
        guard let first = frame.first else { return false }
        return first & 0x01 == 0
    }
}
