/// Events a ``FrameDecoder`` emits: complete frames in stream order, then at most one end.
public enum FrameDecoderEvent: Sendable, Equatable {
    /// A picture message (§2).
    case frame(Frame)
    /// A sound message (§2.10).
    case sound(SoundMessage)
    case end(FrameStreamEnd)
}

/// The incremental, sans-I/O reader of the agent→call frame stream (Protocol/frame-wire.md).
///
/// Give it bytes in any chunking — ``feed(_:emit:)`` from memory, ``read(_:emit:)`` straight from a
/// socket — and it emits each complete ``Frame`` and finally one ``FrameStreamEnd``. It never resynchronises:
/// the first ``FrameWireError`` ends the stream, frames emitted before it stand.
///
/// Reading rules (the socket reader's contract):
/// - ``nextReadSize`` is at least 1 until the stream has ended.
/// - In a body it is exactly the body bytes still missing, so a read never reaches past the current message;
///   ``read(_:emit:)`` then lends the frame's own body storage, so body bytes are written once, never copied.
/// - Between bodies it is ``headerReadSize``; bytes of that read beyond the header block are carried into the
///   body and the following messages.
/// - The body buffer is allocated once, from `Content-Length`, when the header block is complete; a
///   `Content-Length` above the limit is refused before that, so cost is linear in frame size.
public struct FrameDecoder: Sendable {
    public let limits: FrameWireLimits
    /// How many bytes a header-phase read asks for.
    public let headerReadSize: Int

    private var phase: Phase = .preamble(sawCR: false)
    private var finished = false
    /// Bytes consumed from the stream so far.
    private var position = 0
    /// Byte offset of the current message's status line.
    private var messageOffset = 0
    /// Bytes of the current header block so far (status line through the empty line).
    private var headerBytes = 0
    /// The header line being collected (without its line end).
    private var line: [UInt8] = []
    private var fields = HeaderFields()
    /// The current body, allocated from Content-Length; `bodyFilled` bytes of it are written.
    private var body: [UInt8] = []
    private var bodyFilled = 0
    /// Scratch storage for header-phase reads.
    private var inbound: [UInt8] = []

    private enum Phase: Sendable {
        /// Before a message: skipping empty lines (a CR was seen when `sawCR`).
        case preamble(sawCR: Bool)
        /// Matching `HTTP/1.x 200`; the payload is how many bytes of it matched.
        case statusPrefix(Int)
        /// After `HTTP/1.x 200 `: the reason phrase.
        case reasonPhrase
        /// A CR ended the status line; LF must follow.
        case statusCR
        /// At the start of a header line (or of the empty line).
        case lineStart
        /// Inside a header line.
        case inLine
        /// A CR ended a header line; LF must follow.
        case lineCR
        /// A CR began the empty line; LF must follow.
        case finalCR
        /// Receiving the body.
        case body
        /// Skipping the body of a message of a kind this reader does not know (§2.10): bytes still to skip.
        case skip(Int)
    }

    /// Messages of a kind this reader does not know, skipped whole by their `Content-Length` (§2.10).
    public private(set) var skippedMessages = 0

    /// - Parameters:
    ///   - limits: header, body and dimension limits (default ``FrameWireLimits/standard``).
    ///   - headerReadSize: bytes asked for per header-phase read (default 16 KiB; at least 1).
    public init(limits: FrameWireLimits = .standard, headerReadSize: Int = 16 * 1024) {
        self.limits = limits
        self.headerReadSize = max(1, headerReadSize)
        line.reserveCapacity(256)
    }

    /// True once the end (clean, truncated or an error) has been emitted; later input is ignored.
    public var isFinished: Bool { finished }

    /// How many bytes the reader should ask for next: ≥ 1 until ``isFinished``, then 1.
    ///
    /// In a body this is exactly the missing body bytes; otherwise ``headerReadSize``.
    public var nextReadSize: Int {
        if case .body = phase, !finished { return body.count - bodyFilled }
        if case .skip(let remaining) = phase, !finished { return min(remaining, headerReadSize) }
        return headerReadSize
    }

    /// The body bytes still missing while a body is being received, else nil.
    public var bodyBytesMissing: Int? {
        if case .body = phase, !finished { return body.count - bodyFilled }
        return nil
    }

    /// Bytes of the stream consumed so far (the offset the next byte has).
    public var bytesConsumed: Int { position }

    /// Reads straight into the decoder: `fill` gets a buffer of exactly ``nextReadSize`` bytes (the frame's
    /// own body storage during a body) and returns how many it wrote; 0 means EOF and ends the stream.
    ///
    /// - Returns: the count `fill` returned.
    /// - Throws: rethrows what `fill` throws (an I/O error); the decoder is then unchanged.
    @discardableResult
    public mutating func read(
        _ fill: (UnsafeMutableRawBufferPointer) throws -> Int,
        emit: (FrameDecoderEvent) -> Void
    ) rethrows -> Int {
        guard !finished else { return 0 }
        let size = nextReadSize
        if case .body = phase {
            let start = bodyFilled
            let count = try body.withUnsafeMutableBytes { storage in
                try fill(UnsafeMutableRawBufferPointer(rebasing: storage[start..<(start + size)]))
            }
            precondition(count >= 0 && count <= size, "fill wrote \(count) bytes into a \(size)-byte buffer")
            if count == 0 {
                finish(emit: emit)
            } else {
                bodyFilled += count
                position += count
                if bodyFilled == body.count { deliverFrame(emit) }
            }
            return count
        }
        if inbound.count < size { inbound = [UInt8](repeating: 0, count: size) }
        let count = try inbound.withUnsafeMutableBytes { storage in
            try fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<size]))
        }
        precondition(count >= 0 && count <= size, "fill wrote \(count) bytes into a \(size)-byte buffer")
        if count == 0 {
            finish(emit: emit)
        } else {
            let scratch = inbound
            scratch.withUnsafeBytes { consume(UnsafeRawBufferPointer(rebasing: $0[0..<count]), emit: emit) }
        }
        return count
    }

    /// Consumes bytes already in memory, in any chunking; body bytes are copied into the frame's body.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (FrameDecoderEvent) -> Void) {
        consume(bytes, emit: emit)
    }

    /// Consumes bytes already in memory, in any chunking (an `Array`, `ArraySlice`, …).
    public mutating func feed<Bytes: Collection<UInt8>>(_ bytes: Bytes, emit: (FrameDecoderEvent) -> Void) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { consume(UnsafeRawBufferPointer($0), emit: emit) }
        if done == nil { Array(bytes).withUnsafeBytes { consume($0, emit: emit) } }
    }

    /// Ends the stream (EOF): emits `.end(.eof)` between messages (after whole empty lines at most),
    /// `.end(.truncated)` inside one or after a CR still waiting for its LF.
    public mutating func finish(emit: (FrameDecoderEvent) -> Void) {
        guard !finished else { return }
        // A CR waiting for its LF is half a line end: the stream stopped inside something, not between messages.
        if case .preamble(sawCR: false) = phase {
            end(.eof, emit)
        } else {
            end(.truncated, emit)
        }
    }

    // MARK: - Consuming bytes

    private mutating func consume(_ bytes: UnsafeRawBufferPointer, emit: (FrameDecoderEvent) -> Void) {
        var index = 0
        while index < bytes.count, !finished {
            if case .skip(let remaining) = phase {
                let take = min(remaining, bytes.count - index)
                position += take
                index += take
                if take == remaining {
                    skippedMessages += 1
                    phase = .preamble(sawCR: false)
                } else {
                    phase = .skip(remaining - take)
                }
            } else if case .body = phase {
                let take = min(body.count - bodyFilled, bytes.count - index)
                let start = bodyFilled
                body.withUnsafeMutableBytes { storage in
                    storage.baseAddress!.advanced(by: start)
                        .copyMemory(from: bytes.baseAddress!.advanced(by: index), byteCount: take)
                }
                bodyFilled += take
                position += take
                index += take
                if bodyFilled == body.count { deliverFrame(emit) }
            } else {
                let byte = bytes[index]
                index += 1
                position += 1
                headerByte(byte, emit)
            }
        }
    }

    /// Advances the header state machine by one byte (Protocol/frame-wire.md §2–§3).
    private mutating func headerByte(_ byte: UInt8, _ emit: (FrameDecoderEvent) -> Void) {
        if case .preamble(let sawCR) = phase {
            if sawCR {
                guard byte == .lf else { return fail(.badStatusLine("CR not followed by LF before the status line"), emit) }
                phase = .preamble(sawCR: false)
                return
            }
            switch byte {
            case .lf: return
            case .cr: phase = .preamble(sawCR: true); return
            default:
                messageOffset = position - 1
                headerBytes = 0
                fields = HeaderFields()
                phase = .statusPrefix(0)
            }
        }
        headerBytes += 1
        guard headerBytes <= limits.maxHeaderBytes else {
            return fail(.headerTooLarge(limit: limits.maxHeaderBytes), emit)
        }
        switch phase {
        case .preamble, .body, .skip:
            preconditionFailure("unreachable: handled above / by consume")
        case .statusPrefix(let matched):
            if matched == StatusLine.prefix.count {
                switch byte {
                case .space: phase = .reasonPhrase
                case .cr: phase = .statusCR
                case .lf: phase = .lineStart
                default: fail(.badStatusLine(StatusLine.describe(matched: matched, next: byte)), emit)
                }
            } else if StatusLine.accepts(byte, at: matched) {
                phase = .statusPrefix(matched + 1)
            } else {
                fail(.badStatusLine(StatusLine.describe(matched: matched, next: byte)), emit)
            }
        case .reasonPhrase:
            switch byte {
            case .cr: phase = .statusCR
            case .lf: phase = .lineStart
            case .tab: break
            case 0..<0x20, 0x7F: fail(.badStatusLine("control byte \(byte) in the reason phrase"), emit)
            default: break
            }
        case .statusCR:
            if byte == .lf { phase = .lineStart } else { fail(.badStatusLine("CR not followed by LF"), emit) }
        case .lineStart:
            switch byte {
            case .cr: phase = .finalCR
            case .lf: endOfHeaderBlock(emit)
            case .space, .tab: fail(.badHeaderLine("folded continuation line"), emit)
            default:
                line.removeAll(keepingCapacity: true)
                line.append(byte)
                phase = .inLine
            }
        case .inLine:
            switch byte {
            case .cr: phase = .lineCR
            case .lf: endOfHeaderLine(emit)
            default: line.append(byte)
            }
        case .lineCR:
            if byte == .lf { endOfHeaderLine(emit) } else { fail(.badHeaderLine("CR not followed by LF"), emit) }
        case .finalCR:
            if byte == .lf { endOfHeaderBlock(emit) } else { fail(.badHeaderLine("CR not followed by LF"), emit) }
        }
    }

    private mutating func endOfHeaderLine(_ emit: (FrameDecoderEvent) -> Void) {
        do {
            try fields.add(line: line, limits: limits)
            phase = .lineStart
        } catch {
            fail(error, emit)
        }
    }

    private mutating func endOfHeaderBlock(_ emit: (FrameDecoderEvent) -> Void) {
        let parsed: ParsedHeader
        do {
            parsed = try fields.message()
        } catch {
            return fail(error, emit)
        }
        let length: Int
        switch parsed {
        case .picture(let header):
            pendingHeader = header
            pendingSound = nil
            length = header.contentLength
        case .sound(let header):
            pendingSound = header
            length = header.bodyByteCount
        case .unknown(_, let contentLength):
            phase = .skip(contentLength)
            return
        }
        // Every byte is written by reads or feeds before the frame is delivered (a partial frame never is),
        // so the storage need not be zeroed first; untouched pages of a large body cost no memory.
        body = [UInt8](unsafeUninitializedCapacity: length) { _, initialized in
            initialized = length
        }
        bodyFilled = 0
        phase = .body
    }

    private var pendingHeader = FrameHeader(contentLength: 0, bufferWidth: 0, bufferHeight: 0)
    /// The header of the sound message whose body is being received (nil: a picture's).
    private var pendingSound: SoundHeader?

    private mutating func deliverFrame(_ emit: (FrameDecoderEvent) -> Void) {
        let event: FrameDecoderEvent
        if let sound = pendingSound {
            event = .sound(SoundMessage(header: sound, body: body, offset: messageOffset, headerLength: headerBytes))
            pendingSound = nil
        } else {
            event = .frame(Frame(header: pendingHeader, body: body, offset: messageOffset, headerLength: headerBytes))
        }
        body = []
        bodyFilled = 0
        phase = .preamble(sawCR: false)
        emit(event)
    }

    private mutating func fail(_ error: FrameWireError, _ emit: (FrameDecoderEvent) -> Void) {
        end(.error(error), emit)
    }

    private mutating func end(_ end: FrameStreamEnd, _ emit: (FrameDecoderEvent) -> Void) {
        finished = true
        body = []
        line = []
        inbound = []
        emit(.end(end))
    }
}

extension UInt8 {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
}
