// Fuzz target: RTP packets (RFC 3550 §5.1), header extensions (RFC 8285), VP8 payload descriptors
// (RFC 7741 §4.2), RTX (RFC 4588 §4) and the VP8 depayloader's jitter buffer, as a receiver meets them.
//
// Input: [mode] then records [length u16] [milliseconds since the last u8] [packet bytes…]
//   mode bit 0: payload type 97 is RTX for VP8 96 (unwrapped before the depayloader); bits 1–2: reorder
//   window 1, 4, 16 or 128 packets; bit 3: wait 20 ms instead of 500 for a missing packet.
// Properties: parsing ends in a packet or a typed RTPError; a parsed packet serialises and parses back to
// itself, so do its header extension's elements and its VP8 descriptor; the depayloader's every frame is
// exactly the concatenated VP8 data of the packets it stored for first…last (one RTP timestamp, at most
// VP8Payloader.maxPacketsPerFrame of them), frames come in sequence order between resets, each once;
// the counters add up; NACK lists stay within their limit.
import RTP

private let reorderWindows = [1, 4, 16, 128]

private struct Stored {
    var timestamp: UInt32
    var data: ArraySlice<UInt8>
}

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var depayloader = VP8Depayloader(reorderWindow: reorderWindows[Int(mode >> 1) & 3], maxWaitMilliseconds: mode & 8 != 0 ? 20 : 500)
    var stored: [UInt16: Stored] = [:]
    var now: UInt64 = 0
    var inserted = 0
    var previous: (last: UInt16, resets: Int)?

    func accept(_ frames: [VP8Depayloader.Frame], _ depayloader: VP8Depayloader) {
        for frame in frames {
            let count = SequenceNumber.distance(from: frame.firstSequenceNumber, to: frame.lastSequenceNumber) + 1
            check(count >= 1 && count <= VP8Payloader.maxPacketsPerFrame, "a frame of \(count) packets")
            var data: [UInt8] = []
            for index in 0..<count {
                let sequence = frame.firstSequenceNumber &+ UInt16(index)
                guard let packet = stored.removeValue(forKey: sequence) else { violated("frame uses \(sequence), never stored or used twice") }
                check(packet.timestamp == frame.rtpTimestamp, "packet \(sequence) of timestamp \(packet.timestamp) in frame \(frame.rtpTimestamp)")
                data += packet.data
            }
            check(sameBytes(data, frame.data), "frame \(frame.firstSequenceNumber)…\(frame.lastSequenceNumber) is not its packets' data")
            check(frame.isKeyframe == VP8FrameHeader.isKeyframe(frame.data[...]), "keyframe flag disagrees with the data")
            if let previous, previous.resets == depayloader.statistics.resets {
                check(SequenceNumber.isBefore(previous.last, frame.firstSequenceNumber),
                      "frame at \(frame.firstSequenceNumber) after one ending at \(previous.last)")
            }
            previous = (frame.lastSequenceNumber, depayloader.statistics.resets)
        }
    }

    while !input.isAtEnd {
        let length = Int(input.u16()) % 1501
        now += UInt64(input.byte())
        let bytes = input.take(length)
        guard var packet = parseAndRoundTrip(bytes) else {
            accept(depayloader.poll(nowMilliseconds: now), depayloader)
            continue
        }
        if mode & 1 != 0, packet.payloadType == 97 {
            guard let original = try? RTXPacketizer.unwrap(packet, originalSSRC: packet.ssrc, originalPayloadType: 96) else { continue }
            check(original.payload.count == packet.payload.count - 2, "RTX unwrap kept \(original.payload.count) of \(packet.payload.count) bytes")
            packet = original
        }
        let before = depayloader.statistics
        let frames: [VP8Depayloader.Frame]
        do {
            frames = try depayloader.insert(packet, arrivalMilliseconds: now)
        } catch {
            check(depayloader.statistics.malformed == before.malformed + 1, "a refused packet was not counted as malformed")
            continue
        }
        inserted += 1
        let after = depayloader.statistics
        if after.duplicates == before.duplicates && after.late == before.late {
            guard let (_, size) = try? VP8PayloadDescriptor.parse(packet.payload) else { violated("inserted a packet whose descriptor does not parse") }
            if after.resets != before.resets { stored.removeAll() }
            stored[packet.sequenceNumber] = Stored(timestamp: packet.timestamp, data: packet.payload.dropFirst(size))
        }
        accept(frames, depayloader)
        check(depayloader.missingSequenceNumbers(limit: 17).count <= 17, "more missing numbers than asked for")
    }
    accept(depayloader.poll(nowMilliseconds: now + 1000), depayloader)
    let statistics = depayloader.statistics
    check(statistics.packetsReceived == inserted, "\(statistics.packetsReceived) packets counted, \(inserted) inserted")
}

/// Parses a packet; a parsed one must serialise and parse back to itself (extension elements and VP8
/// descriptor too).
private func parseAndRoundTrip(_ bytes: ArraySlice<UInt8>) -> RTPPacket? {
    let packet: RTPPacket
    do {
        packet = try RTPPacket(parsing: bytes)
    } catch {
        return nil  // typed: RTPError
    }
    do {
        let again = try packet.serialized()
        check(again.count == bytes.count, "re-serialised \(bytes.count) bytes as \(again.count)")
        check(samePacket(try RTPPacket(parsing: again), packet), "RTP packet changed on re-serialisation")
    } catch {
        violated("a parsed RTP packet does not serialise or re-parse: \(error)")
    }
    if let headerExtension = packet.headerExtension, let elements = try? headerExtension.elements() {
        do {
            let rebuilt = try RTPHeaderExtension(elements: elements)
            check(try rebuilt.elements() == elements, "header extension elements changed when rebuilt")
        } catch {
            violated("parsed header extension elements do not rebuild: \(error)")
        }
    }
    if let (descriptor, _) = try? VP8PayloadDescriptor.parse(packet.payload) {
        var written: [UInt8] = []
        descriptor.serialize(into: &written)
        written.append(0)  // a payload byte: a descriptor alone is refused
        check((try? VP8PayloadDescriptor.parse(written[...]))?.0 == descriptor, "VP8 descriptor changed on re-serialisation")
    }
    return packet
}

/// `==` on RTPPacket, with the payload and the extension's data compared by memcmp (``sameBytes(_:_:)``).
private func samePacket(_ a: RTPPacket, _ b: RTPPacket) -> Bool {
    guard sameBytes(a.payload, b.payload),
          sameBytes(a.headerExtension?.data ?? [], b.headerExtension?.data ?? []) else { return false }
    var (x, y) = (a, b)
    (x.payload, y.payload) = ([], [])
    x.headerExtension?.data = []
    y.headerExtension?.data = []
    return x == y
}
