import RTP
import XCTest

/// The packet status chunks and receive deltas of transport-wide CC feedback
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1.1–§3.1.5), every 16-bit chunk value, the rules by
/// which chunks are chosen, and each field at and past its limit: run length 8191, status count 65535,
/// reference time ±2²³, deltas 0…255 small and the rest large, the RTCP length field's 65535 words.
///
/// Chunk layouts (§3.1.3, §3.1.4), T the top bit:
/// ```
/// run length:       |T=0| S (2) |       run length (13)       |
/// one-bit vector:   |T=1|S=0|     14 symbols, 1 bit each      |
/// two-bit vector:   |T=1|S=1|      7 symbols, 2 bits each     |
/// ```
/// Symbols (§3.1.1): 00 not received, 01 received with a small delta (1 byte, 0…255 × 250 µs), 10 received
/// with a large or negative delta (2 bytes, signed), 11 reserved. The first symbol is the most significant.
final class TransportFeedbackChunkTests: XCTestCase {
    typealias Chunk = RTCPTransportFeedback.StatusChunk
    typealias Symbol = RTCPTransportFeedback.Symbol

    /// All 65536 values: each decodes to a chunk that encodes back to the same 16 bits, or is refused because
    /// it holds the reserved symbol 11. The counts follow from the layouts: 3 × 8192 runs, 2¹⁴ one-bit
    /// vectors, 3⁷ two-bit vectors.
    func testEveryChunkValueDecodesAndEncodesBackExactly() throws {
        var runs = 0, oneBit = 0, twoBit = 0, refused = 0
        for value in UInt16.min...UInt16.max {
            let chunk: Chunk
            do {
                chunk = try Chunk(bits: value)
            } catch {
                refused += 1
                XCTAssertTrue(value & 0xE000 == 0x6000 || value & 0xC000 == 0xC000, "only symbol 11 is refused: \(value)")
                continue
            }
            XCTAssertEqual(try chunk.bits(), value, "\(value)")
            switch chunk {
            case .runLength(_, let length):
                runs += 1
                XCTAssertEqual(length, Int(value & 0x1FFF))
                XCTAssertEqual(chunk.capacity, length)
            case .oneBitVector(let symbols):
                oneBit += 1
                XCTAssertEqual(symbols.count, 14)
                XCTAssertEqual(chunk.capacity, 14)
            case .twoBitVector(let symbols):
                twoBit += 1
                XCTAssertEqual(symbols.count, 7)
                XCTAssertEqual(chunk.capacity, 7)
            }
        }
        XCTAssertEqual(runs, 3 * 8192)
        XCTAssertEqual(oneBit, 16_384)
        XCTAssertEqual(twoBit, 2187)
        XCTAssertEqual(refused, 8192 + (16_384 - 2187))
    }

    /// The first symbol sits in the most significant bits after the header bits.
    func testSymbolOrderInsideVectors() throws {
        let nr = Symbol.notReceived, s = Symbol.smallDelta, l = Symbol.largeDelta
        XCTAssertEqual(try Chunk(bits: 0xA000), .oneBitVector([s] + Array(repeating: nr, count: 13)))
        XCTAssertEqual(try Chunk(bits: 0x8001), .oneBitVector(Array(repeating: nr, count: 13) + [s]))
        XCTAssertEqual(try Chunk(bits: 0xD000), .twoBitVector([s, nr, nr, nr, nr, nr, nr]))
        XCTAssertEqual(try Chunk(bits: 0xE000), .twoBitVector([l, nr, nr, nr, nr, nr, nr]))
        XCTAssertEqual(try Chunk(bits: 0xC002), .twoBitVector([nr, nr, nr, nr, nr, nr, l]))
        XCTAssertEqual(try Chunk(bits: 0xC001), .twoBitVector([nr, nr, nr, nr, nr, nr, s]))
        XCTAssertEqual(try Chunk(bits: 0x2005), .runLength(s, length: 5))
        XCTAssertEqual(try Chunk(bits: 0x4005), .runLength(l, length: 5))
        XCTAssertEqual(try Chunk(bits: 0x0000), .runLength(nr, length: 0))
    }

    /// Run lengths 0…8191 are written; 8192 and negative ones are refused. Vectors must hold exactly 14 (one-bit,
    /// no large delta) or 7 symbols.
    func testChunkEncodingLimits() throws {
        XCTAssertEqual(Chunk.maxRunLength, 8191)
        XCTAssertEqual(try Chunk.runLength(.notReceived, length: 8191).bits(), 0x1FFF)
        XCTAssertEqual(try Chunk.runLength(.smallDelta, length: 8191).bits(), 0x3FFF)
        XCTAssertEqual(try Chunk.runLength(.largeDelta, length: 8191).bits(), 0x5FFF)
        XCTAssertEqual(try Chunk.runLength(.largeDelta, length: 0).bits(), 0x4000)
        assertThrowsRTPError(try Chunk.runLength(.smallDelta, length: 8192).bits(), .tooMany(.feedback, count: 8192, limit: 8191))
        assertThrowsRTPError(try Chunk.runLength(.smallDelta, length: -1).bits(), .tooMany(.feedback, count: -1, limit: 8191))
        for count in [0, 13, 15] {
            assertThrowsRTPError(try Chunk.oneBitVector(Array(repeating: .smallDelta, count: count)).bits(), nil, "\(count) one-bit symbols")
        }
        for count in [0, 6, 8, 14] {
            assertThrowsRTPError(try Chunk.twoBitVector(Array(repeating: .largeDelta, count: count)).bits(), nil, "\(count) two-bit symbols")
        }
        assertThrowsRTPError(try Chunk.oneBitVector(Array(repeating: .notReceived, count: 13) + [.largeDelta]).bits())
    }

    // MARK: - Chunk choice

    /// ``RTCPTransportFeedback/chunks(for:)``: a run where 14 or more repeat (or the run ends the list), a
    /// one-bit vector of the next 14 when none is large, a run of 7 or more when one is, else a two-bit vector
    /// of the next 7; vectors running past the end are filled with "not received".
    func testChunkChoiceRules() throws {
        let nr = Symbol.notReceived, s = Symbol.smallDelta, l = Symbol.largeDelta
        func repeated(_ symbol: Symbol, _ count: Int) -> [Symbol] { Array(repeating: symbol, count: count) }
        let cases: [(String, [Symbol], [Chunk])] = [
            ("14 small: a run", repeated(s, 14), [.runLength(s, length: 14)]),
            ("14 small, then more: a run of exactly 14", repeated(s, 14) + [nr, s],
             [.runLength(s, length: 14), .oneBitVector([nr, s] + repeated(nr, 12))]),
            ("14 lost, then more: a run of exactly 14", repeated(nr, 14) + [s, s],
             [.runLength(nr, length: 14), .runLength(s, length: 2)]),
            ("13 small, then a loss: a one-bit vector", repeated(s, 13) + [nr], [.oneBitVector(repeated(s, 13) + [nr])]),
            ("13 small ending the list: a run", repeated(s, 13), [.runLength(s, length: 13)]),
            ("8192 small: the longest run, then a run of 1", repeated(s, 8192), [.runLength(s, length: 8191), .runLength(s, length: 1)]),
            ("7 large then 7 small: two runs", repeated(l, 7) + repeated(s, 7), [.runLength(l, length: 7), .runLength(s, length: 7)]),
            ("6 large then small: a two-bit vector", repeated(l, 6) + [s], [.twoBitVector(repeated(l, 6) + [s])]),
            ("small, lost, small: a filled one-bit vector", [s, nr, s], [.oneBitVector([s, nr, s] + repeated(nr, 11))]),
            ("large, small: a filled two-bit vector", [l, s], [.twoBitVector([l, s] + repeated(nr, 5))]),
            ("20 lost, 1 small", repeated(nr, 20) + [s], [.runLength(nr, length: 20), .runLength(s, length: 1)]),
            ("5 small, large, 8 small", repeated(s, 5) + [l] + repeated(s, 8),
             [.twoBitVector(repeated(s, 5) + [l, s]), .runLength(s, length: 7)]),
            ("a large delta 14 symbols away does not stop a one-bit vector", repeated(s, 3) + [nr] + repeated(s, 10) + [l],
             [.oneBitVector(repeated(s, 3) + [nr] + repeated(s, 10)), .runLength(l, length: 1)]),
        ]
        for (name, symbols, expected) in cases {
            let chunks = RTCPTransportFeedback.chunks(for: symbols)
            XCTAssertEqual(chunks, expected, name)
            XCTAssertGreaterThanOrEqual(chunks.reduce(0) { $0 + $1.capacity }, symbols.count, name)
            // Through a packet and back: the same symbols.
            let statuses: [RTCPTransportFeedback.PacketStatus] = symbols.map {
                switch $0 {
                case .notReceived: .notReceived
                case .smallDelta: .received(delta: 4)
                case .largeDelta: .received(delta: -4)
                }
            }
            let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: 0,
                                                   feedbackPacketCount: 0, statuses: statuses)
            XCTAssertEqual(packet.chunks, expected, name)
            XCTAssertEqual(try RTCPTransportFeedback.packets(inCompound: packet.serialized()).first?.statuses, statuses, name)
        }
        XCTAssertEqual(RTCPTransportFeedback.chunks(for: []), [])
    }

    // MARK: - Deltas

    /// 0 and 255 are small (one unsigned byte); 256, −1 and the 16-bit extremes are large (two signed bytes,
    /// big-endian). The packet, byte for byte, and the arrival times it gives.
    func testDeltaEdgesByteForByte() throws {
        let bytes = hex("""
            8f cd 00 07        # V=2 P=0 FMT=15 | PT=205 | length 7 (32 bytes: no padding needed)
            00 00 00 01        # SSRC of packet sender
            00 00 00 02        # SSRC of media source
            00 0a 00 06        # base sequence number 10 | status count 6
            00 00 01 05        # reference time 1 (64 ms) | fb pkt. count 5
            d6 a8              # two-bit vector: small small large large large large | not received
            00 ff              # small deltas 0 and 255 (63.75 ms)
            01 00              # large 256 (64 ms)
            ff ff              # large −1 (−0.25 ms)
            7f ff              # large 32767 (8191.75 ms)
            80 00              # large −32768 (−8192 ms)
            """)
        let deltas: [Int16] = [0, 255, 256, -1, .max, .min]
        let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 10, referenceTime: 1,
                                               feedbackPacketCount: 5, statuses: deltas.map { .received(delta: $0) })
        XCTAssertEqual(packet.chunks, [.twoBitVector([.smallDelta, .smallDelta, .largeDelta, .largeDelta, .largeDelta, .largeDelta, .notReceived])])
        XCTAssertEqual(try packet.serialized(), bytes)
        let parsed = try XCTUnwrap(RTCPTransportFeedback.packets(inCompound: bytes).first)
        XCTAssertEqual(parsed, packet)
        XCTAssertEqual(parsed.receiveDeltas, deltas)
        var arrivals: [Int64?] = []
        var sequences: [UInt16] = []
        parsed.forEachPacket { sequences.append($0); arrivals.append($1) }
        XCTAssertEqual(sequences, [10, 11, 12, 13, 14, 15])
        XCTAssertEqual(arrivals, [64_000, 127_750, 191_750, 191_500, 8_383_250, 191_250])
        // A small symbol written with a delta outside 0…255 is refused; a large symbol may carry any delta.
        var wrong = packet
        wrong.receiveDeltas[1] = 256
        assertThrowsRTPError(try wrong.serialized(), .malformed(.feedback, "transport-cc small delta 256 outside 0…255"))
        wrong.receiveDeltas[1] = -1
        assertThrowsRTPError(try wrong.serialized(), .malformed(.feedback, "transport-cc small delta -1 outside 0…255"))
        var anyLarge = packet
        anyLarge.receiveDeltas[2] = 3
        XCTAssertEqual(try RTCPTransportFeedback.packets(inCompound: anyLarge.serialized()).first?.receiveDeltas[2], 3)
    }

    /// Only the first `packet status count` symbols need deltas: a vector's symbols past the count are
    /// written as read and ask for nothing.
    func testSymbolsPastTheStatusCountNeedNoDeltas() throws {
        let bytes = hex("""
            af cd 00 05        # P=1 | length 5 (24 bytes)
            00 00 00 01 00 00 00 02
            00 64 00 01        # base 100 | status count 1
            00 00 00 00        # reference time 0 | fb pkt. count 0
            bf ff              # one-bit vector: 14 × received, of which 1 counts
            0a                 # its delta: 2.5 ms
            01                 # padding: 1 byte
            """)
        let packet = try XCTUnwrap(RTCPTransportFeedback.packets(inCompound: bytes).first)
        XCTAssertEqual(packet.packetStatusCount, 1)
        XCTAssertEqual(packet.chunks, [.oneBitVector(Array(repeating: .smallDelta, count: 14))])
        XCTAssertEqual(packet.receiveDeltas, [10])
        XCTAssertEqual(packet.statuses, [.received(delta: 10)])
        XCTAssertEqual(try packet.serialized(), bytes)
        // A run longer than the count, likewise.
        let run = RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, packetStatusCount: 2, referenceTime: 0,
                                        feedbackPacketCount: 0, chunks: [.runLength(.largeDelta, length: 8191)], receiveDeltas: [1, 2])
        XCTAssertEqual(try RTCPTransportFeedback.packets(inCompound: run.serialized()).first, run)
    }

    // MARK: - Field limits

    /// The reference time is signed 24 bits: −2²³ (`80 00 00`) and 2²³ − 1 (`7f ff ff`) are written and read
    /// back; one past either end is refused.
    func testReferenceTimeEdges() throws {
        for (value, wire): (Int32, [UInt8]) in [(-(1 << 23), [0x80, 0, 0]), ((1 << 23) - 1, [0x7F, 0xFF, 0xFF]), (-1, [0xFF, 0xFF, 0xFF]), (0, [0, 0, 0])] {
            let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: value,
                                                   feedbackPacketCount: 0, statuses: [.received(delta: 1)])
            let bytes = try packet.serialized()
            XCTAssertEqual(Array(bytes[16..<19]), wire, "\(value)")
            let parsed = try XCTUnwrap(RTCPTransportFeedback.packets(inCompound: bytes).first)
            XCTAssertEqual(parsed.referenceTime, value)
            XCTAssertEqual(parsed.referenceTimeMicroseconds, Int64(value) * 64_000)
        }
        for value: Int32 in [1 << 23, -(1 << 23) - 1, .max, .min] {
            let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: value,
                                                   feedbackPacketCount: 0, statuses: [.received(delta: 1)])
            assertThrowsRTPError(try packet.serialized(), nil, "\(value)")
        }
    }

    /// 65535 statuses — the most the count field holds — are built, written and read back, sequence numbers
    /// wrapping from the base; 65536 are refused.
    func testStatusCountLimit() throws {
        let statuses: [RTCPTransportFeedback.PacketStatus] = (0..<65_535).map { $0 % 3 == 0 ? .notReceived : .received(delta: Int16($0 % 200)) }
        let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 65_535, referenceTime: 0,
                                               feedbackPacketCount: 255, statuses: statuses)
        XCTAssertEqual(packet.packetStatusCount, 65_535)
        let bytes = try packet.serialized()
        XCTAssertEqual(Array(bytes[12..<16]), [0xFF, 0xFF, 0xFF, 0xFF], "base 65535 | count 65535")
        let parsed = try XCTUnwrap(RTCPTransportFeedback.packets(inCompound: bytes).first)
        XCTAssertEqual(parsed.statuses, statuses)
        var first: [UInt16] = []
        var last: UInt16?
        parsed.forEachPacket { sequence, _ in
            if first.count < 3 { first.append(sequence) }
            last = sequence
        }
        XCTAssertEqual(first, [65_535, 0, 1])
        XCTAssertEqual(last, 65_533)
        assertThrowsRTPError(try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: 0,
                                                       feedbackPacketCount: 0, statuses: statuses + [.notReceived]),
                             .tooMany(.feedback, count: 65_536, limit: 65_535))
    }

    /// The packet's length field holds at most 65535 words (262144 bytes): zero-length runs (legal, if
    /// useless) can push a packet past it. At the limit it is written and read back; one word more is refused
    /// and the buffer left as it was.
    func testRTCPLengthFieldLimit() throws {
        func packet(emptyRuns: Int) -> RTCPTransportFeedback {
            RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, packetStatusCount: 1, referenceTime: 0,
                                  feedbackPacketCount: 0,
                                  chunks: Array(repeating: .runLength(.notReceived, length: 0), count: emptyRuns) + [.runLength(.smallDelta, length: 1)],
                                  receiveDeltas: [1])
        }
        // 20 fixed bytes + 2 × 131061 chunk bytes + 1 delta = 262143, padded to 262144: 65535 words.
        let atLimit = try packet(emptyRuns: 131_060).serialized()
        XCTAssertEqual(atLimit.count, 262_144)
        XCTAssertEqual(Array(atLimit[2...3]), [0xFF, 0xFF])
        XCTAssertEqual(try RTCPTransportFeedback.packets(inCompound: atLimit).first?.statuses, [.received(delta: 1)])
        var buffer: [UInt8] = [1, 2, 3]
        assertThrowsRTPError(try packet(emptyRuns: 131_061).serialize(into: &buffer), .tooMany(.rtcpHeader, count: 65_536, limit: 65_535))
        XCTAssertEqual(buffer, [1, 2, 3])
    }

    /// With P = 0 the draft's own zero padding follows the deltas: up to 3 bytes are read past, 4 are refused
    /// (a whole word more than the deltas need means the chunks and the length disagree).
    func testZeroPaddingAfterTheDeltasUpToThreeBytes() throws {
        let three = hex("""
            8f cd 00 06        # P=0 | length 6 (28 bytes)
            00 00 00 01 00 00 00 02
            00 00 00 03        # base 0 | status count 3
            00 00 00 00        # reference time 0 | fb pkt. count 0
            20 03 01 02        # run of 3 small | deltas 1, 2 ...
            03 00 00 00        # ... and 3 | 3 bytes of zero padding
            """)
        XCTAssertEqual(try RTCPTransportFeedback.packets(inCompound: three).first?.statuses, [1, 2, 3].map { .received(delta: $0) })
        let four = hex("""
            8f cd 00 06        # P=0 | length 6 (28 bytes)
            00 00 00 01 00 00 00 02
            00 00 00 02        # base 0 | status count 2
            00 00 00 00
            20 02 01 02        # run of 2 small | deltas 1, 2
            00 00 00 00        # 4 bytes after the deltas
            """)
        assertThrowsRTPError(try RTCPTransportFeedback.packets(inCompound: four),
                             .malformed(.feedback, "transport-cc: 4 bytes after the receive deltas"))
    }

    /// Padding: the content is padded to a word with P = 1 and the count in the last byte (as libwebrtc
    /// writes it) for each of the four possible content lengths mod 4.
    func testPaddingForEveryContentLength() throws {
        for deltaCount in 1...4 {
            let packet = try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
                                                   statuses: Array(repeating: .received(delta: 7), count: deltaCount))
            let bytes = try packet.serialized()
            let content = 20 + 2 + deltaCount
            let padding = (4 - content % 4) % 4
            XCTAssertEqual(bytes.count, content + padding, "\(deltaCount) deltas")
            XCTAssertEqual(bytes[0] & 0x20 != 0, padding > 0, "P bit with \(deltaCount) deltas")
            if padding > 0 {
                XCTAssertEqual(bytes.last, UInt8(padding))
                XCTAssertTrue(bytes[content..<(bytes.count - 1)].allSatisfy { $0 == 0 })
            }
            XCTAssertEqual(try RTCPTransportFeedback.packets(inCompound: bytes).first, packet)
        }
    }
}
