// Reading and writing transport-wide CC feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1;
// the layout is drawn above `RTCPTransportFeedback`).

extension RTCPTransportFeedback {
    /// Bytes of the fixed part after the common header: two SSRCs, base, count, reference time, fb count.
    static let fixedSize = 16

    /// Every transport-wide CC feedback packet in a compound RTCP packet (a whole datagram after SRTCP
    /// unprotection), in order; other packets are skipped unparsed. Throws for a malformed compound or a
    /// malformed feedback packet.
    public static func packets(inCompound bytes: [UInt8]) throws(RTPError) -> [RTCPTransportFeedback] {
        var result: [RTCPTransportFeedback] = []
        try RTCPPacket.forEachPacket(in: bytes[...]) { type, count, body throws(RTPError) in
            if type == RTCPPacket.PacketType.transportFeedback, count == format {
                result.append(try RTCPTransportFeedback(body: body))
            }
        }
        return result
    }

    /// Parses one packet's body: the bytes after the common header, padding removed.
    init(body: ArraySlice<UInt8>) throws(RTPError) {
        guard body.count >= Self.fixedSize else {
            throw .truncated(.feedback, needed: 4 + Self.fixedSize, available: 4 + body.count)
        }
        senderSSRC = body.u32(0)
        mediaSSRC = body.u32(4)
        baseSequenceNumber = body.u16(8)
        packetStatusCount = body.u16(10)
        referenceTime = Int32(bitPattern: body.u24(12) << 8) >> 8
        feedbackPacketCount = body.u8(15)
        guard packetStatusCount > 0 else { throw .malformed(.feedback, "transport-cc packet status count 0") }

        var offset = Self.fixedSize
        var described = 0
        chunks = []
        while described < Int(packetStatusCount) {
            guard offset + 2 <= body.count else {
                throw .truncated(.feedback, needed: 4 + offset + 2, available: 4 + body.count)
            }
            let chunk = try StatusChunk(bits: body.u16(offset))
            offset += 2
            described += min(chunk.capacity, Int(packetStatusCount) - described)
            chunks.append(chunk)
        }

        receiveDeltas = []
        let symbols = receivedSymbols()
        let deltaBytes = symbols.reduce(0) { $0 + ($1 == .largeDelta ? 2 : 1) }
        guard offset + deltaBytes <= body.count else {
            throw .truncated(.feedback, needed: 4 + offset + deltaBytes, available: 4 + body.count)
        }
        receiveDeltas.reserveCapacity(symbols.count)
        for symbol in symbols {
            if symbol == .smallDelta {
                receiveDeltas.append(Int16(body.u8(offset)))
                offset += 1
            } else {
                receiveDeltas.append(Int16(bitPattern: body.u16(offset)))
                offset += 2
            }
        }
        // The draft's zero padding to a word when P = 0; with P = 1 the common header already removed it.
        guard body.count - offset <= 3 else {
            throw .malformed(.feedback, "transport-cc: \(body.count - offset) bytes after the receive deltas")
        }
    }

    /// Appends this packet: header with P = 1 and the padding count in the last byte when the content is not
    /// a whole number of words (as libwebrtc writes it). Throws when the chunks describe fewer packets than
    /// ``packetStatusCount``, the deltas do not match the symbols (count, or a small symbol's delta outside
    /// 0…255), the count is 0, the reference time does not fit 24 signed bits, or the packet exceeds the
    /// RTCP length field. A failed write leaves `buffer` as it was.
    public func serialize(into buffer: inout [UInt8]) throws(RTPError) {
        guard packetStatusCount > 0 else { throw .malformed(.feedback, "transport-cc packet status count 0") }
        guard Self.referenceTimeRange.contains(referenceTime) else {
            throw .malformed(.feedback, "transport-cc reference time \(referenceTime) does not fit 24 signed bits")
        }
        var chunkBits: [UInt16] = []
        chunkBits.reserveCapacity(chunks.count)
        for chunk in chunks { chunkBits.append(try chunk.bits()) }
        let described = chunks.reduce(0) { $0 + $1.capacity }
        guard described >= Int(packetStatusCount) else {
            throw .malformed(.feedback, "transport-cc chunks describe \(described) of \(packetStatusCount) packets")
        }
        let deltaSymbols = receivedSymbols()
        guard deltaSymbols.count == receiveDeltas.count else {
            throw .malformed(.feedback, "transport-cc: \(deltaSymbols.count) received packets, \(receiveDeltas.count) deltas")
        }
        for (symbol, delta) in zip(deltaSymbols, receiveDeltas) where symbol == .smallDelta && !(0...255).contains(delta) {
            throw .malformed(.feedback, "transport-cc small delta \(delta) outside 0…255")
        }

        let start = buffer.count
        buffer.append(0x80 | Self.format)
        buffer.append(RTCPPacket.PacketType.transportFeedback)
        buffer.appendU16(0)
        buffer.appendU32(senderSSRC)
        buffer.appendU32(mediaSSRC)
        buffer.appendU16(baseSequenceNumber)
        buffer.appendU16(packetStatusCount)
        buffer.appendU24(UInt32(bitPattern: referenceTime) & 0xFF_FFFF)
        buffer.append(feedbackPacketCount)
        for bits in chunkBits { buffer.appendU16(bits) }
        for (symbol, delta) in zip(deltaSymbols, receiveDeltas) {
            if symbol == .smallDelta { buffer.append(UInt8(delta)) } else { buffer.appendU16(UInt16(bitPattern: delta)) }
        }
        let padding = (4 - (buffer.count - start) % 4) % 4
        if padding > 0 {
            buffer.append(contentsOf: repeatElement(0, count: padding - 1))
            buffer.append(UInt8(padding))
            buffer[start] |= 0x20
        }
        let words = (buffer.count - start) / 4 - 1
        guard words <= Int(UInt16.max) else {
            buffer.removeSubrange(start...)
            throw .tooMany(.rtcpHeader, count: words, limit: Int(UInt16.max))
        }
        buffer.setU16(UInt16(words), at: start + 2)
    }

    /// The packet's bytes alone.
    public func serialized() throws(RTPError) -> [UInt8] {
        var buffer: [UInt8] = []
        try serialize(into: &buffer)
        return buffer
    }
}
