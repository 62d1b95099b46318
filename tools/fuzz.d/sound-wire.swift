// Fuzz target: sound messages on the frame wire (Protocol/frame-wire.md §2.10), and what they do to the
// pictures around them.
//
// Input: [mode] [header lines and body of the middle message…]
//   The stream is a whole picture message, then `HTTP/1.1 200 OK\r\n` followed by the input's bytes (the middle
//   message: header lines, empty line, body, as the fuzzer makes them; the seeds are good sound messages, an
//   unknown kind and broken ones), then a second whole picture message.
//   mode bits 0–2: a chunk size for the split decode (1…8 bytes; 0: one byte at a time).
// Properties: the first picture is always delivered, whole and unchanged, whatever follows; the stream ends in
// exactly one end event, last; decoding in chunks gives the same events as all at once; every sound message
// keeps the limits and its body is exactly samples × channels × 2 bytes; a decoded sound message serialises
// (FrameEncoder.encodeSound) to bytes that decode to the same header and body; a stream whose middle message
// decoded as sound, ending where the middle bytes end, is followed by the second picture, unchanged.
import FrameWire

private let pictureA = FrameEncoder.encode(
    header: FrameHeader(contentLength: 4, bufferWidth: 2, bufferHeight: 2, timestampMicros: 1000, sequence: 1),
    body: [0xFF, 0xD8, 0xFF, 0xD9])
private let pictureB = FrameEncoder.encode(
    header: FrameHeader(contentLength: 6, bufferWidth: 2, bufferHeight: 2, timestampMicros: 2000, sequence: 2),
    body: [0xFF, 0xD8, 0x00, 0x01, 0xFF, 0xD9])

private struct Outcome: Equatable {
    var events: [FrameDecoderEvent] = []
    var ends = 0
    var eventsAfterEnd = 0

    mutating func record(_ event: FrameDecoderEvent) {
        if ends > 0 { eventsAfterEnd += 1 }
        if case .end = event { ends += 1 }
        events.append(event)
    }
}

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let middle = Array(input.rest())
    let stream = pictureA + Array("HTTP/1.1 200 OK\r\n".utf8) + middle + pictureB

    var whole = Outcome()
    var decoder = FrameDecoder()
    decoder.feed(stream) { whole.record($0) }
    decoder.finish { whole.record($0) }
    check(whole.ends == 1 && whole.eventsAfterEnd == 0, "\(whole.ends) ends, \(whole.eventsAfterEnd) events after the end")

    // The first picture stands whatever the middle message is.
    guard case .frame(let first)? = whole.events.first else { violated("the first picture was not delivered: \(whole.events.first as Any)") }
    check(FrameEncoder.encode(first) == pictureA, "the first picture changed")

    // Split input gives the same events.
    let chunk = Int(mode & 7) == 0 ? 1 : Int(mode & 7)
    var split = Outcome()
    var splitDecoder = FrameDecoder(headerReadSize: chunk)
    var offset = 0
    while offset < stream.count, !splitDecoder.isFinished {
        let end = min(stream.count, offset + chunk)
        splitDecoder.feed(stream[offset..<end]) { split.record($0) }
        offset = end
    }
    splitDecoder.finish { split.record($0) }
    check(split == whole, "split into \(chunk)-byte feeds: \(split.events.count) events, all at once \(whole.events.count)")

    let middleEnd = pictureA.count + 17 + middle.count
    for (index, event) in whole.events.enumerated() {
        guard case .sound(let sound) = event else { continue }
        let header = sound.header
        check(sound.body.count == header.samples * header.channels * 2, "sound body \(sound.body.count) bytes for \(header)")
        check((1...SoundHeader.maxSamplesPerMessage).contains(header.samples) && (1...SoundHeader.maxChannels).contains(header.channels)
              && SoundHeader.rateRange.contains(header.rate), "sound header beyond the limits: \(header)")
        // Serialise → decode → the same fields and samples.
        var again: [FrameDecoderEvent] = []
        var redecoder = FrameDecoder()
        redecoder.feed(FrameEncoder.encode(sound)) { again.append($0) }
        redecoder.finish { again.append($0) }
        guard again.count == 2, case .sound(let back) = again[0], again[1] == .end(.eof) else {
            violated("a decoded sound message did not round-trip: \(again)")
        }
        check(back.header == header && back.body == sound.body, "round trip changed the sound message")
        // A sound message that ends where the middle bytes end is followed by the second picture, whole.
        if sound.offset + sound.messageLength == middleEnd {
            guard index + 1 < whole.events.count, case .frame(let second) = whole.events[index + 1] else {
                violated("the picture after the sound message is missing: \(whole.events[(index + 1)...])")
            }
            check(FrameEncoder.encode(second) == pictureB, "the second picture changed")
        }
    }
}
