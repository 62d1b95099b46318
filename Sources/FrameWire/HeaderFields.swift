/// Collects and checks the header lines of one message (Protocol/frame-wire.md §2.2–§2.4):
///
///     header-line = field-name ":" OWS field-value OWS line-end
///     field-name  = 1*tchar                      ; RFC 9110 §5.6.2, compared case-insensitively
///     OWS         = *( SP / HTAB )
///
/// Known fields: `Content-Length`, `Buffer-Width`, `Buffer-Height` (required, 1*DIGIT, ≥ 1), `Buffer-Orientation`
/// (optional, 0…255, anything else 0), and our agent's `Buffer-Timestamp` / `Buffer-Sequence` / `Buffer-Format` /
/// `Buffer-Color-Range` / `Buffer-Damage` (optional; a malformed damage never fails the frame, §2.9; an unknown format or range, an I420 body of the wrong length, or a JPEG
/// said to be limited range, is refused at the empty line), and the `Capture-*` fields (§2.7: text, never an
/// error).
/// Unknown fields are ignored. Each line is checked as it completes, so the first fault is the one reported.
struct HeaderFields: Sendable {
    private(set) var contentLength: Int?
    private(set) var width: Int?
    private(set) var height: Int?
    private(set) var orientation: Int?
    private(set) var timestamp: UInt64?
    private(set) var sequence: UInt64?
    /// The `Buffer-Format` value, upper-cased, as first given (checked at the empty line).
    private(set) var format: String?
    /// The `Buffer-Color-Range` value, lower-cased, as first given (checked at the empty line).
    private(set) var colorRange: String?
    /// The `Capture-*` fields, as first given (§2.7; never an error).
    private(set) var capture = CaptureDescription()
    /// The first `Buffer-Memory` value as given (read at the empty line, for `BGRX-SHM` only).
    private(set) var memory: [UInt8]?
    /// The first `Buffer-Damage` value as given (read at the empty line, against the buffer size), and
    /// whether a repeat differed from it (§2.9: then the damage is unknown).
    private(set) var damage: [UInt8]?
    private(set) var damageConflict = false
    /// `Message-Kind`, lower-cased, as first given (§2.10; absent: a picture).
    private(set) var kind: String?
    /// The `Sound-*` values as first given (checked at the empty line, for a sound message only), and the
    /// names of those repeated with other bytes.
    private var sound: [Known: ArraySlice<UInt8>] = [:]
    private var soundConflicts: [String] = []

    private enum Known: Hashable {
        case contentLength, width, height, orientation, timestamp, sequence, format, colorRange, memory, damage
        case captureDisplay, captureArea, captureRect, captureFPS
        case messageKind, soundFormat, soundRate, soundChannels, soundSamples, soundTimestamp, soundSequence, soundSource
    }

    /// The lower-case names this reader knows.
    private static let names: [([UInt8], Known)] = [
        (Array("content-length".utf8), .contentLength),
        (Array("buffer-width".utf8), .width),
        (Array("buffer-height".utf8), .height),
        (Array("buffer-orientation".utf8), .orientation),
        (Array("buffer-timestamp".utf8), .timestamp),
        (Array("buffer-sequence".utf8), .sequence),
        (Array("buffer-format".utf8), .format),
        (Array("buffer-color-range".utf8), .colorRange),
        (Array("buffer-memory".utf8), .memory),
        (Array("buffer-damage".utf8), .damage),
        (Array("capture-display".utf8), .captureDisplay),
        (Array("capture-area".utf8), .captureArea),
        (Array("capture-rect".utf8), .captureRect),
        (Array("capture-fps".utf8), .captureFPS),
        (Array("message-kind".utf8), .messageKind),
        (Array("sound-format".utf8), .soundFormat),
        (Array("sound-rate".utf8), .soundRate),
        (Array("sound-channels".utf8), .soundChannels),
        (Array("sound-samples".utf8), .soundSamples),
        (Array("sound-timestamp".utf8), .soundTimestamp),
        (Array("sound-sequence".utf8), .soundSequence),
        (Array("sound-source".utf8), .soundSource),
    ]

    /// The names of the `Sound-*` fields, for error messages.
    private static func soundName(_ known: Known) -> String {
        switch known {
        case .soundFormat: "Sound-Format"
        case .soundRate: "Sound-Rate"
        case .soundChannels: "Sound-Channels"
        case .soundSamples: "Sound-Samples"
        case .soundTimestamp: "Sound-Timestamp"
        case .soundSequence: "Sound-Sequence"
        default: "Sound-Source"
        }
    }

    /// Adds one header line (without its line end).
    mutating func add(line: [UInt8], limits: FrameWireLimits) throws(FrameWireError) {
        guard let colon = line.firstIndex(of: .colon) else {
            throw .badHeaderLine("no colon in \(Self.show(line[...]))")
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else {
            throw .badHeaderLine("field name is not an HTTP token in \(Self.show(line[...]))")
        }
        guard let known = Self.known(name) else { return }
        var value = line[(colon + 1)...]
        while let first = value.first, first == .space || first == .tab { value = value.dropFirst() }
        while let last = value.last, last == .space || last == .tab { value = value.dropLast() }

        switch known {
        case .contentLength:
            let length = try Self.required(value, name: "Content-Length", max: nil)
            guard length <= limits.maxBodyBytes else {
                throw .bodyTooLarge(contentLength: Self.show(value), limit: limits.maxBodyBytes)
            }
            try Self.set(&contentLength, length, name: "Content-Length")
        case .width:
            try Self.set(&width, try Self.required(value, name: "Buffer-Width", max: limits.maxDimension), name: "Buffer-Width")
        case .height:
            try Self.set(&height, try Self.required(value, name: "Buffer-Height", max: limits.maxDimension), name: "Buffer-Height")
        case .orientation:
            let parsed = Self.digits(value).flatMap { $0 <= 255 ? Int($0) : nil } ?? 0
            try Self.set(&orientation, parsed, name: "Buffer-Orientation")
        case .timestamp:
            if timestamp == nil { timestamp = Self.digits(value) }
        case .sequence:
            if sequence == nil { sequence = Self.digits(value) }
        case .format:
            // Compared case-insensitively; kept as text so an unknown value is reported at the empty line.
            let text = String(decoding: value.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
            if let format, format != text { throw .conflictingHeaders("Buffer-Format") }
            format = text
        case .colorRange:
            let text = String(decoding: value.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
            if let colorRange, colorRange != text { throw .conflictingHeaders("Buffer-Color-Range") }
            colorRange = text
        case .memory:
            if memory == nil { memory = Array(value) }
        case .damage:
            if let damage { damageConflict = damageConflict || !damage.elementsEqual(value) } else { damage = Array(value) }
        case .captureDisplay: Self.keepFirst(&capture.display, value)
        case .captureArea: Self.keepFirst(&capture.area, value)
        case .captureRect: Self.keepFirst(&capture.rect, value)
        case .captureFPS: Self.keepFirst(&capture.framesPerSecond, value)
        case .messageKind:
            // A token, compared case-insensitively (§2.10); an empty or non-token value is refused here.
            guard !value.isEmpty, value.allSatisfy(Self.isTokenByte) else {
                throw .badHeaderValue(name: "Message-Kind", value: Self.show(value))
            }
            let text = String(decoding: value.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
            if let kind, kind != text { throw .conflictingHeaders("Message-Kind") }
            kind = text
        case .soundFormat, .soundRate, .soundChannels, .soundSamples, .soundTimestamp, .soundSequence, .soundSource:
            if let first = sound[known] {
                if !first.elementsEqual(value) { soundConflicts.append(Self.soundName(known)) }
            } else {
                sound[known] = ArraySlice(Array(value))
            }
        }
    }

    /// What the finished header block describes (§2.10): a picture, a sound message, or a message of a
    /// kind this reader does not know (skipped whole by its `Content-Length`).
    func message() throws(FrameWireError) -> ParsedHeader {
        switch kind {
        case nil, "picture": return .picture(try header())
        case "sound": return .sound(try soundHeader())
        case let other?:
            guard let contentLength else { throw .missingHeader("Content-Length") }
            return .unknown(kind: other, contentLength: contentLength)
        }
    }

    /// The sound header: every required field present and within its limit, the body exactly its PCM.
    private func soundHeader() throws(FrameWireError) -> SoundHeader {
        guard let contentLength else { throw .missingHeader("Content-Length") }
        if let name = soundConflicts.first { throw .conflictingHeaders(name) }
        func value(_ known: Known) throws(FrameWireError) -> ArraySlice<UInt8> {
            guard let value = sound[known] else { throw .missingHeader(Self.soundName(known)) }
            return value
        }
        let formatText = try value(.soundFormat)
        guard let format = SoundSampleFormat(
            rawValue: String(decoding: formatText.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self))
        else { throw .badHeaderValue(name: "Sound-Format", value: Self.show(formatText)) }
        let rate = try Self.required(try value(.soundRate), name: "Sound-Rate", max: SoundHeader.rateRange.upperBound)
        guard rate >= SoundHeader.rateRange.lowerBound else {
            throw .badHeaderValue(name: "Sound-Rate", value: Self.show(try value(.soundRate)))
        }
        let channels = try Self.required(try value(.soundChannels), name: "Sound-Channels", max: SoundHeader.maxChannels)
        let samples = try Self.required(try value(.soundSamples), name: "Sound-Samples", max: SoundHeader.maxSamplesPerMessage)
        let stampText = try value(.soundTimestamp)
        guard let timestamp = Self.digits(stampText) else {
            throw .badHeaderValue(name: "Sound-Timestamp", value: Self.show(stampText))
        }
        var header = SoundHeader(format: format, rate: rate, channels: channels, samples: samples, timestampMicros: timestamp)
        header.sequence = sound[.soundSequence].flatMap { Self.digits($0) }
        if let source = sound[.soundSource], source.count <= CaptureDescription.maxValueBytes {
            header.source = String(decoding: source, as: UTF8.self)
        }
        guard contentLength == header.bodyByteCount else {
            throw .bodyLengthMismatch(format: format.rawValue, contentLength: contentLength, expected: header.bodyByteCount)
        }
        return header
    }

    /// The finished header; throws ``FrameWireError/missingHeader(_:)`` for an absent required field.
    func header() throws(FrameWireError) -> FrameHeader {
        guard let contentLength else { throw .missingHeader("Content-Length") }
        guard let width else { throw .missingHeader("Buffer-Width") }
        guard let height else { throw .missingHeader("Buffer-Height") }
        var bufferFormat = BufferFormat.jpeg
        if let format {
            guard let known = BufferFormat(rawValue: format) else {
                throw .badHeaderValue(name: "Buffer-Format", value: Self.show(ArraySlice(format.utf8)))
            }
            bufferFormat = known
        }
        var range: BufferColorRange?
        if let colorRange {
            guard let known = BufferColorRange(rawValue: colorRange) else {
                throw .badHeaderValue(name: "Buffer-Color-Range", value: Self.show(ArraySlice(colorRange.utf8)))
            }
            // A JPEG is JFIF, full range by definition (§2.6): "limited" would contradict its own body.
            guard bufferFormat == .i420 || known == .full else {
                throw .badHeaderValue(name: "Buffer-Color-Range", value: "\"\(colorRange)\" (a JPEG body is full range)")
            }
            range = known
        }
        if bufferFormat != .jpeg {
            let expected = bufferFormat == .i420 ? BufferFormat.i420ByteCount(width: width, height: height) : 1
            guard contentLength == expected else {
                throw .bodyLengthMismatch(format: bufferFormat.rawValue, contentLength: contentLength, expected: expected)
            }
        }
        var reference: SharedPictureReference?
        if bufferFormat == .sharedBGRX {
            guard let memory else { throw .missingHeader("Buffer-Memory") }
            reference = try Self.memoryReference(memory[...])
        }
        var damageRects: [DamageRect]?
        var damageFault: BufferDamageError?
        if let damage {
            switch damageConflict ? .failure(.conflicting) : BufferDamage.parse(damage[...], width: width, height: height) {
            case .success(let rects): damageRects = rects
            case .failure(let fault): damageFault = fault
            }
        }
        return FrameHeader(
            contentLength: contentLength, bufferWidth: width, bufferHeight: height,
            orientation: orientation ?? 0, timestampMicros: timestamp, sequence: sequence, format: bufferFormat,
            colorRange: range, capture: capture.isEmpty ? nil : capture, memory: reference,
            damage: damageRects, damageFault: damageFault)
    }

    /// A `Capture-*` value for people: the first one within ``CaptureDescription/maxValueBytes`` bytes wins.
    private static func keepFirst(_ field: inout String?, _ value: ArraySlice<UInt8>) {
        guard field == nil, value.count <= CaptureDescription.maxValueBytes else { return }
        field = String(decoding: value, as: UTF8.self)
    }

    // MARK: - Helpers

    /// `Buffer-Memory` = generation SP slot SP version (§2.8): three 1*DIGIT numbers within 64 bits, one SP
    /// between them, the slot 0 or 1, the version even (an odd one is a slot being written).
    private static func memoryReference(_ value: ArraySlice<UInt8>) throws(FrameWireError) -> SharedPictureReference {
        let parts = value.split(separator: .space, omittingEmptySubsequences: false)
        guard parts.count == 3, let generation = digits(parts[0]), let slot = digits(parts[1]), let version = digits(parts[2]),
              slot < UInt64(SharedPicture.slotCount), version % 2 == 0
        else { throw .badHeaderValue(name: "Buffer-Memory", value: show(value)) }
        return SharedPictureReference(generation: generation, slot: Int(slot), version: version)
    }

    /// A required numeric value: 1*DIGIT (leading zeros allowed), at least 1, at most `max` when given.
    private static func required(_ value: ArraySlice<UInt8>, name: String, max: Int?) throws(FrameWireError) -> Int {
        guard let number = digits(value) else {
            // Not 1*DIGIT, or more than UInt64 holds: for Content-Length the latter is simply too large.
            if name == "Content-Length", !value.isEmpty, value.allSatisfy(isDigit) {
                return Int.max
            }
            throw .badHeaderValue(name: name, value: show(value))
        }
        guard number >= 1, max.map({ number <= UInt64($0) }) ?? true else {
            throw .badHeaderValue(name: name, value: show(value))
        }
        return number > UInt64(Int.max) ? Int.max : Int(number)
    }

    /// A repeated field is fine with the same value and ``FrameWireError/conflictingHeaders(_:)`` otherwise.
    private static func set(_ slot: inout Int?, _ value: Int, name: String) throws(FrameWireError) {
        if let existing = slot, existing != value { throw .conflictingHeaders(name) }
        slot = value
    }

    /// 1*DIGIT as an unsigned number, nil when empty, not all digits, or above `UInt64.max`.
    static func digits(_ value: ArraySlice<UInt8>) -> UInt64? {
        guard !value.isEmpty else { return nil }
        var number: UInt64 = 0
        for byte in value {
            guard isDigit(byte) else { return nil }
            let (times10, o1) = number.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
            if o1 || o2 { return nil }
            number = sum
        }
        return number
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// tchar (RFC 9110 §5.6.2): `!#$%&'*+-.^_`|~`, DIGIT, ALPHA.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }

    private static func known(_ name: ArraySlice<UInt8>) -> Known? {
        for (candidate, known) in names where candidate.count == name.count {
            if zip(candidate, name).allSatisfy({ $0 == ($1 | ($1 >= 0x41 && $1 <= 0x5A ? 0x20 : 0)) }) {
                return known
            }
        }
        return nil
    }

    /// Printable text of header bytes for an error message (at most 64 bytes shown): printable ASCII as it
    /// is, any other byte as `\xHH` (two lowercase hex digits).
    static func show(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for byte in bytes.prefix(64) {
            if (0x20...0x7E).contains(byte) {
                text.append(Character(Unicode.Scalar(byte)))
            } else {
                // Always two hex digits: "\x020" would read as 0x02 then "0".
                text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return "\"" + text + (bytes.count > 64 ? "…" : "") + "\""
    }
}
