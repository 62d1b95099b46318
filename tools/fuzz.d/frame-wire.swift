// Fuzz target: the FrameWire decoder (Protocol/frame-wire.md) in any chunking.
//
// Input: [mode] [k chunk sizes] [stream…]
//   mode bits 0–2: k, how many chunk-size bytes follow (0: the whole stream at once); each gives a chunk of
//                  1–256 bytes, used in turn;
//   mode bit 3:    small limits (64-byte header block, 512-byte body, 64 pixels), else the standard ones;
//   mode bits 4–6: the header-phase read size for the read(_:emit:) path (1, 2, 3, 7, 64, 512, 4096, 16 KiB);
//   mode bit 7:    the path compared with the reference: 0 feed(_:emit:) in the chosen chunks, 1 read(_:emit:)
//                  with reads cut to them (one path an input, as each pass costs as much as the reference:
//                  libFuzzer flips the bit, so both paths meet every stream).
// Properties: every chunking — feed(_:emit:) in the chosen chunks or read(_:emit:) with reads cut to them —
// gives the same frames and the same end as feeding it all at once; the stream ends in exactly one end
// event (eof, truncated or a typed error), last; nextReadSize is never 0 before the end, and a body read asks
// for exactly the missing body bytes; each frame keeps the limits and its Content-Length; bytes are never
// consumed past the stream.
import FrameWire

private let smallLimits = FrameWireLimits(maxHeaderBytes: 64, maxBodyBytes: 512, maxDimension: 64)
private let headerReadSizes = [1, 2, 3, 7, 64, 512, 4096, 16 * 1024]

private struct Outcome: Equatable {
    var frames: [Frame] = []
    var sounds: [SoundMessage] = []
    var end: FrameStreamEnd?
    var eventsAfterEnd = 0

    mutating func record(_ event: FrameDecoderEvent) {
        if end != nil { eventsAfterEnd += 1 }
        switch event {
        case .frame(let frame): frames.append(frame)
        case .sound(let sound): sounds.append(sound)
        case .end(let end): if self.end == nil { self.end = end }
        }
    }
}

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let chunks = (0..<Int(mode & 7)).map { _ in Int(input.byte()) + 1 }
    let limits = mode & 8 != 0 ? smallLimits : .standard
    let headerReadSize = headerReadSizes[Int(mode >> 4) & 7]
    let stream = Array(input.rest())

    // The reference: everything at once, then EOF.
    var reference = Outcome()
    var whole = FrameDecoder(limits: limits)
    whole.feed(stream) { reference.record($0) }
    whole.finish { reference.record($0) }
    checkOutcome(reference, decoder: whole, limits: limits, streamCount: stream.count)

    if mode & 0x80 == 0 {
        feedInChunks(stream, chunks: chunks, limits: limits, reference: reference)
    } else {
        readInChunks(stream, chunks: chunks, limits: limits, headerReadSize: headerReadSize, reference: reference)
    }
}

/// feed(_:emit:) in the chosen chunks.
private func feedInChunks(_ stream: [UInt8], chunks: [Int], limits: FrameWireLimits, reference: Outcome) {
    var fed = Outcome()
    var chunked = FrameDecoder(limits: limits)
    var offset = 0
    var turn = 0
    while offset < stream.count && !chunked.isFinished {
        let size = chunks.isEmpty ? stream.count : chunks[turn % chunks.count]
        turn += 1
        let end = min(stream.count, offset + size)
        chunked.feed(stream[offset..<end]) { fed.record($0) }
        offset = end
    }
    chunked.finish { fed.record($0) }
    check(fed == reference, "feed in chunks \(chunks) gave \(fed.frames.count) frames, \(String(describing: fed.end)); all at once \(reference.frames.count), \(String(describing: reference.end))")
}

/// read(_:emit:), the socket path: each read is cut to the next chunk size; 0 bytes is EOF.
private func readInChunks(_ stream: [UInt8], chunks: [Int], limits: FrameWireLimits, headerReadSize: Int, reference: Outcome) {
    var read = Outcome()
    var reader = FrameDecoder(limits: limits, headerReadSize: headerReadSize)
    var offset = 0
    var turn = 0
    var reads = 0
    while !reader.isFinished {
        let asked = reader.nextReadSize
        check(asked >= 1, "nextReadSize is \(asked) before the end")
        if let missing = reader.bodyBytesMissing { check(asked == missing, "a body read asks for \(asked), \(missing) missing") }
        else { check(asked >= 1 && asked <= headerReadSize, "a header or skip read asks for \(asked), not 1…\(headerReadSize)") }
        let cut = chunks.isEmpty ? asked : min(asked, chunks[turn % chunks.count])
        turn += 1
        reads += 1
        check(reads <= stream.count + 2, "more reads (\(reads)) than stream bytes (\(stream.count)) + EOF")
        let wrote = reader.read({ buffer in
            check(buffer.count == asked, "read lent \(buffer.count) bytes, nextReadSize said \(asked)")
            let count = min(cut, stream.count - offset)
            if count > 0 { buffer.copyBytes(from: stream[offset..<(offset + count)]) }
            offset += count
            return count
        }, emit: { read.record($0) })
        check(wrote >= 0, "read returned \(wrote)")
    }
    check(read == reference, "read in chunks \(chunks) (header reads \(headerReadSize)) gave \(read.frames.count) frames, \(String(describing: read.end)); all at once \(reference.frames.count), \(String(describing: reference.end))")
}

private func checkOutcome(_ outcome: Outcome, decoder: FrameDecoder, limits: FrameWireLimits, streamCount: Int) {
    check(outcome.end != nil, "no end event after finish")
    check(outcome.eventsAfterEnd == 0, "\(outcome.eventsAfterEnd) events after the end")
    check(decoder.isFinished, "not finished after finish")
    check(decoder.nextReadSize >= 1, "nextReadSize 0 after the end")
    check(decoder.bytesConsumed <= streamCount, "consumed \(decoder.bytesConsumed) of \(streamCount) bytes")
    if case .error = outcome.end {} else {
        check(decoder.bytesConsumed == streamCount, "ended \(String(describing: outcome.end)) after \(decoder.bytesConsumed) of \(streamCount) bytes")
    }
    var previousEnd = 0
    for frame in outcome.frames {
        let header = frame.header
        check(frame.body.count == header.contentLength, "body of \(frame.body.count) bytes, Content-Length \(header.contentLength)")
        check(header.contentLength >= 1 && header.contentLength <= limits.maxBodyBytes, "Content-Length \(header.contentLength) outside 1…\(limits.maxBodyBytes)")
        check((1...limits.maxDimension).contains(header.bufferWidth) && (1...limits.maxDimension).contains(header.bufferHeight),
              "picture \(header.bufferWidth)x\(header.bufferHeight) beyond \(limits.maxDimension)")
        check(frame.headerLength >= 1 && frame.headerLength <= limits.maxHeaderBytes, "header block of \(frame.headerLength) bytes")
        check(frame.offset >= previousEnd, "frame at \(frame.offset) overlaps the previous one ending at \(previousEnd)")
        previousEnd = frame.offset + frame.messageLength
        check(previousEnd <= streamCount, "frame ends at \(previousEnd), past the stream's \(streamCount) bytes")
        if header.format == .i420 {
            check(header.contentLength == BufferFormat.i420ByteCount(width: header.bufferWidth, height: header.bufferHeight),
                  "I420 body of \(header.contentLength) bytes for \(header.bufferWidth)x\(header.bufferHeight)")
        }
    }
    for sound in outcome.sounds {
        let header = sound.header
        check(sound.body.count == header.bodyByteCount, "sound body of \(sound.body.count) bytes, \(header.bodyByteCount) expected")
        check((1...SoundHeader.maxSamplesPerMessage).contains(header.samples) && (1...SoundHeader.maxChannels).contains(header.channels)
              && SoundHeader.rateRange.contains(header.rate), "sound header beyond the limits: \(header)")
        check(sound.offset + sound.messageLength <= streamCount, "sound message ends past the stream")
    }
}
