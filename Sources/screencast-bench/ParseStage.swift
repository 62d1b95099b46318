import FrameWire

/// FrameWire decoding throughput, reading as the socket reader does (reads of exactly `nextReadSize`).
enum ParseStage {
    /// 64 messages with 300 KB bodies (a 1080p JPEG's typical size): about 19 MB per pass, in GB/s.
    static func large(runs: Int) -> Measurement {
        let body = [UInt8](repeating: 0xAB, count: 300_000)
        let message = FrameEncoder.encode(header: FrameHeader(contentLength: 0, bufferWidth: 1920, bufferHeight: 1080), body: body)
        let stream = Array((0..<64).map { _ in message }.joined())
        let seconds = time(runs) { precondition(parse(stream) == 64) }
        return Measurement(stage: "parse 1080p-sized frames", unit: "GB/s", values: seconds.map { Double(stream.count) / $0 / 1e9 })
    }

    /// 100 000 messages of about 200 bytes, in millions of messages per second.
    static func tiny(runs: Int) -> Measurement {
        let message = FrameEncoder.encode(header: FrameHeader(contentLength: 0, bufferWidth: 16, bufferHeight: 16), body: [UInt8](repeating: 1, count: 80))
        let stream = Array((0..<100_000).map { _ in message }.joined())
        let seconds = time(runs) { precondition(parse(stream) == 100_000) }
        return Measurement(stage: "parse 200-byte messages", unit: "M msg/s", values: seconds.map { 0.1 / $0 })
    }

    /// Decodes `stream` with reads of exactly `nextReadSize` bytes; returns the frames seen.
    static func parse(_ stream: [UInt8]) -> Int {
        var decoder = FrameDecoder()
        var frames = 0
        var offset = 0
        stream.withUnsafeBytes { source in
            while !decoder.isFinished {
                decoder.read({ buffer in
                    let count = min(buffer.count, source.count - offset)
                    if count > 0 { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)])) }
                    offset += count
                    return count
                }, emit: { if case .frame = $0 { frames += 1 } })
            }
        }
        return frames
    }
}
