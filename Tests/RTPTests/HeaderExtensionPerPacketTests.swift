import RTP
import XCTest

/// The per-packet header extension path the sender chain runs for every packet (RFC 8285 §4.2 one-byte form):
/// ``RTPHeaderExtension/appendingOneByte(_:to:)`` element by element against the builder given all elements at
/// once, and ``TransportWideSequenceNumber/stamp(_:id:inSerializedPacket:)`` writing the transport-wide number
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2) into serialized packets of every layout — touching
/// those two bytes and nothing else.
final class HeaderExtensionPerPacketTests: XCTestCase {
    /// Random one-byte elements with distinct IDs 1…14 and 1…16 bytes each.
    private func randomElements(using generator: inout SplitMix64) -> [RTPHeaderExtensionElement] {
        let ids = Array(UInt8(1)...14).shuffled(using: &generator).prefix(Int.random(in: 1...6, using: &generator))
        return ids.map { RTPHeaderExtensionElement(id: $0, data: randomBytes(Int.random(in: 1...16, using: &generator), using: &generator)[...]) }
    }

    /// Appending elements one at a time gives the very block the builder makes from all of them: same bytes,
    /// same padding; each intermediate block is whole words and holds the elements so far.
    func testAppendingMatchesBuildingAtOnce() throws {
        var generator = SplitMix64(seed: 8285)
        for round in 0..<500 {
            let elements = randomElements(using: &generator)
            var block: RTPHeaderExtension?
            for (count, element) in elements.enumerated() {
                let next = try RTPHeaderExtension.appendingOneByte(element, to: block)
                XCTAssertEqual(next.data.count % 4, 0, "round \(round)")
                XCTAssertEqual(try next.elements(), Array(elements.prefix(count + 1)), "round \(round)")
                block = next
            }
            let built = try RTPHeaderExtension(elements: elements)
            XCTAssertEqual(block?.profile, RTPHeaderExtension.oneByteProfile)
            XCTAssertEqual(block.map { Array($0.data) }, Array(built.data), "round \(round)")
        }
    }

    /// Appending to a block read off the wire with padding between its elements keeps those elements and
    /// their order; only the padding after the last element is replaced.
    func testAppendingAfterInnerPadding() throws {
        let read = RTPHeaderExtension(profile: 0xBEDE, data: hex("10 aa 00 00 21 bb cc 00")[...])
        let appended = try RTPHeaderExtension.appendingOneByte(.init(id: 3, data: [0xDD][...]), to: read)
        XCTAssertEqual(Array(appended.data), hex("10 aa 00 00 21 bb cc 30 dd 00 00 00"))
        XCTAssertEqual(try appended.elements().map(\.id), [1, 2, 3])
        // A block of padding only: the element goes first.
        let empty = RTPHeaderExtension(profile: 0xBEDE, data: hex("00 00 00 00")[...])
        XCTAssertEqual(Array(try RTPHeaderExtension.appendingOneByte(.init(id: 4, data: [1, 2][...]), to: empty).data), hex("41 01 02 00"))
    }

    /// Stamping into serialized packets of every layout — 0…15 CSRCs, the TWCC element first, last or alone,
    /// one- or two-byte form, with or without payload and padding — reads back the number stamped and
    /// changes exactly the element's two bytes.
    func testStampingChangesOnlyTheTwoBytesInEveryLayout() throws {
        var generator = SplitMix64(seed: 0x7CC2)
        for round in 0..<600 {
            let id = UInt8.random(in: 1...14, using: &generator)
            var others = randomElements(using: &generator).filter { $0.id != id }
            let twoByte = Bool.random(using: &generator)
            if twoByte { others.append(.init(id: 100, data: [][...])) }  // forces the two-byte form
            let twcc = TransportWideSequenceNumber.element(id: id, sequenceNumber: 0)
            let position = Int.random(in: 0...others.count, using: &generator)
            var elements = others
            elements.insert(twcc, at: position)
            let packet = RTPPacket(
                marker: Bool.random(using: &generator), payloadType: 96, sequenceNumber: UInt16.random(in: 0...UInt16.max, using: &generator),
                timestamp: 1, ssrc: 2, csrcs: (0..<Int.random(in: 0...15, using: &generator)).map { UInt32($0) },
                headerExtension: try RTPHeaderExtension(elements: elements),
                payload: randomBytes(Int.random(in: 0...50, using: &generator), using: &generator)[...],
                paddingCount: UInt8.random(in: 0...3, using: &generator))
            let original = try packet.serialized()
            var stamped = original
            let number = UInt16.random(in: 0...UInt16.max, using: &generator)
            try TransportWideSequenceNumber.stamp(number, id: id, inSerializedPacket: &stamped)
            XCTAssertEqual(try TransportWideSequenceNumber.read(from: RTPPacket(parsing: stamped), id: id), number, "round \(round)")
            let changed = zip(original, stamped).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            XCTAssertLessThanOrEqual(changed.count, 2, "round \(round)")
            if let first = changed.first { XCTAssertLessThanOrEqual(changed.last! - first, 1, "round \(round): adjacent bytes") }
            XCTAssertEqual(stamped.count, original.count)
            var restamped = stamped
            try TransportWideSequenceNumber.stamp(0, id: id, inSerializedPacket: &restamped)
            XCTAssertEqual(restamped, original, "round \(round): stamping 0 again gives the placeholder bytes back")
        }
    }

    /// Stamping refuses what it cannot stamp and leaves those bytes as they were: an element of another size
    /// under the ID, an ID that is absent, a malformed block, and bytes that are not RTP.
    func testStampingRefusals() throws {
        let threeBytes = try RTPPacket(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3,
                                       headerExtension: RTPHeaderExtension(elements: [.init(id: 5, data: [1, 2, 3][...])]),
                                       payload: [9][...]).serialized()
        let malformed = hex("90 60 00 01 00 00 00 02 00 00 00 03 be de 00 01 53 01 02 03")  // ID 5 claims 4 bytes, 3 there
        let notRTP = hex("40 60 00 01 00 00 00 02 00 00 00 03 be de 00 01 51 00 07 00")  // version 1
        for (name, bytes, id): (String, [UInt8], UInt8) in [
            ("3-byte element", threeBytes, 5), ("absent ID", threeBytes, 6), ("malformed block", malformed, 5), ("version 1", notRTP, 5),
        ] {
            var copy = bytes
            assertThrowsRTPError(try TransportWideSequenceNumber.stamp(7, id: id, inSerializedPacket: &copy), nil, name)
            XCTAssertEqual(copy, bytes, name)
        }
        var sequencer = TransportWideSequencer()
        XCTAssertEqual(sequencer.nextSequenceNumber, 1, "libwebrtc starts at 1")
        XCTAssertEqual((0..<3).map { _ in sequencer.next() }, [1, 2, 3])
    }
}
