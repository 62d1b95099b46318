import FrameWire
import Foundation
import ScreencastSupport

/// `extract FILE --out DIR [--force]`: writes each body as DIR/000000.jpg, DIR/000001.jpg, … in stream order;
/// a raw I420 body (`Buffer-Format: I420`) as DIR/NNNNNN.yuv, its bytes as sent.
/// A folder that already holds files is refused unless `--force`, so two runs never mix.
struct ExtractCommand {
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
            case .end(let streamEnd):
                end = streamEnd
            }
        }
        if let failure { throw failure }
        let ending = StreamEnding(end: end, bytesRead: bytesRead)
        Console.error("wrote \(written) bod\(written == 1 ? "y" : "ies") to \(outputDirectory); stream end: \(ending.text)")
        return end == .eof ? ExitCode.success : ExitCode.failure
    }
}
