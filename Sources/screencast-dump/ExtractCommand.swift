import FrameWire
import Foundation
import ScreencastSupport

/// `extract FILE --out DIR [--force]`: writes each body as DIR/000000.jpg, DIR/000001.jpg, … in stream order;
/// a raw I420 body (`Buffer-Format: I420`) as DIR/NNNNNN.yuv, its bytes as sent.
/// Sound messages (Protocol/frame-wire.md §2.10) go into DIR/sound.wav, one PCM WAV of all of them in stream
/// order; messages in another rate or channel count go into a WAV of that format (DIR/sound-16000hz-1ch.wav),
/// one per format however often the formats alternate, at most ``maxSoundFormats`` (messages in more formats
/// are counted and skipped, with a warning).
/// A folder that already holds files is refused unless `--force`, so two runs never mix.
struct ExtractCommand {
    /// The most WAV files one extraction writes (distinct rate and channel-count pairs).
    static let maxSoundFormats = 8

    let path: String
    let outputDirectory: String
    let force: Bool

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(words, options: ["out", "log-level"], flags: ["force"])
        path = try arguments.positionals(exactly: 1, names: "the dump FILE to extract")[0]
        guard let out = arguments.string("out"), !out.isEmpty else { throw UsageError("extract needs --out DIR") }
        outputDirectory = out
        force = arguments.has("force")
        _ = try DumpTool.logger(arguments, component: "extract")  // validates --log-level
    }

    func run() throws -> Int32 {
        try DumpFile.checkReadable(path)  // before making a folder for nothing
        try DumpFile.makeFolder(outputDirectory)
        if !force {
            let existing = try DumpFile.entries(of: outputDirectory)
            if !existing.isEmpty {
                throw DumpToolError.unusablePath(outputDirectory, "the folder already holds \(existing.count) "
                    + "file\(existing.count == 1 ? "" : "s"); use an empty folder, or --force to write into it anyway")
            }
        }
        var written = 0
        var failure: Error?
        var wavs: [SoundFormat: WAVWriter] = [:]
        var soundMessages = 0
        var skippedSound = 0
        var end = FrameStreamEnd.eof
        let bytesRead = try DumpFile.read(path: path) { event in
            switch event {
            case .frame(let frame):
                guard failure == nil else { return }
                let name = String(format: frame.header.format == .i420 ? "%06d.yuv" : "%06d.jpg", written)
                do {
                    try DumpFile.write(frame.body, to: (outputDirectory as NSString).appendingPathComponent(name))
                    written += 1
                } catch {
                    failure = error
                }
            case .sound(let sound):
                guard failure == nil else { return }
                do {
                    let format = SoundFormat(rate: sound.header.rate, channels: sound.header.channels)
                    if wavs[format] == nil {
                        guard wavs.count < Self.maxSoundFormats else {
                            skippedSound += 1
                            return
                        }
                        let name = wavs.isEmpty ? "sound.wav" : "sound-\(format.rate)hz-\(format.channels)ch.wav"
                        wavs[format] = try WAVWriter(path: (outputDirectory as NSString).appendingPathComponent(name),
                                                     rate: format.rate, channels: format.channels)
                    }
                    try wavs[format]?.append(sound.body)
                    soundMessages += 1
                } catch {
                    failure = error
                }
            case .end(let streamEnd):
                end = streamEnd
            }
        }
        if failure == nil {
            for wav in wavs.values where failure == nil {
                do { try wav.finish() } catch { failure = error }
            }
        }
        if let failure { throw failure }
        if soundMessages > 0 {
            Console.error("wrote \(soundMessages) sound message\(soundMessages == 1 ? "" : "s") to \(wavs.count) WAV file\(wavs.count == 1 ? "" : "s") (sound.wav)")
        }
        if skippedSound > 0 {
            Console.error("warning: skipped \(skippedSound) sound message\(skippedSound == 1 ? "" : "s") in more than \(Self.maxSoundFormats) formats")
        }
        let ending = StreamEnding(end: end, bytesRead: bytesRead)
        Console.error("wrote \(written) bod\(written == 1 ? "y" : "ies") to \(outputDirectory); stream end: \(ending.text)")
        return end == .eof ? ExitCode.success : ExitCode.failure
    }
}

/// A sound message's sample format as a WAV file keeps it.
struct SoundFormat: Hashable {
    let rate: Int
    let channels: Int
}

/// A PCM WAV file (RIFF, `fmt ` PCM 16-bit, `data`) written as the sound arrives; the sizes are filled in by
/// ``finish()``. The one owner of its descriptor.
final class WAVWriter {
    let path: String
    let rate: Int
    let channels: Int
    private let fd: Int32
    private var dataBytes = 0
    private var finished = false

    init(path: String, rate: Int, channels: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DumpToolError.system(path) }
        self.fd = fd
        self.path = path
        self.rate = rate
        self.channels = channels
        try write(Self.header(rate: rate, channels: channels, dataBytes: 0))
    }

    deinit { close(fd) }

    /// The 44-byte header of a 16-bit PCM WAV.
    static func header(rate: Int, channels: Int, dataBytes: Int) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { out += $0 } }
        func u16(_ value: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian) { out += $0 } }
        out += Array("RIFF".utf8); u32(36 + dataBytes); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); u32(16); u16(1); u16(channels); u32(rate); u32(rate * channels * 2); u16(channels * 2); u16(16)
        out += Array("data".utf8); u32(dataBytes)
        return out
    }

    func append(_ pcm: [UInt8]) throws {
        try write(pcm)
        dataBytes += pcm.count
    }

    /// Writes the sizes into the header.
    func finish() throws {
        guard !finished else { return }
        finished = true
        let header = Self.header(rate: rate, channels: channels, dataBytes: dataBytes)
        let count = header.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard count == header.count else { throw DumpToolError.system(path) }
    }

    private func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw DumpToolError.system(path)
                }
                offset += count
            }
        }
    }
}
