import Foundation
import FrameWire
import ScreencastSupport

/// `inspect [--json] FILE`.
struct InspectCommand {
    let path: String
    let json: Bool

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(words, options: ["log-level"], flags: ["json"])
        path = try arguments.positionals(exactly: 1, names: "the dump FILE to inspect")[0]
        json = arguments.has("json")
        _ = try DumpTool.logger(arguments, component: "inspect")  // validates --log-level
    }

    func run() throws -> Int32 {
        let inspection = try DumpInspection.inspect(path: path)
        print(json ? inspection.json.serialized : inspection.table)
        return inspection.end == .eof ? ExitCode.success : ExitCode.failure
    }
}

/// `extract FILE --out DIR`.
struct ExtractCommand {
    let path: String
    let outputDirectory: String

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(words, options: ["out", "log-level"], flags: [])
        path = try arguments.positionals(exactly: 1, names: "the dump FILE to extract")[0]
        guard let out = arguments.string("out"), !out.isEmpty else { throw UsageError("extract needs --out DIR") }
        outputDirectory = out
        _ = try DumpTool.logger(arguments, component: "extract")  // validates --log-level
    }

    func run() throws -> Int32 {
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw DumpToolError.io(outputDirectory, error.localizedDescription)
        }
        var written = 0
        var failure: Error?
        var end = FrameStreamEnd.eof
        try DumpFile.read(path: path) { event in
            switch event {
            case .frame(let frame):
                guard failure == nil else { return }
                let name = String(format: "%06d.jpg", written)
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
        FileHandle.standardError.write(Data("wrote \(written) JPEG files to \(outputDirectory); stream end: \(end)\n".utf8))
        return end == .eof ? ExitCode.success : ExitCode.failure
    }
}
