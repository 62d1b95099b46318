import FrameWire
import Foundation
import Media
import ScreencastSupport

/// `inspect [--json] FILE`: decodes the dump and fully decodes every JPEG body (to I420, as the call process
/// does; raw I420 bodies need no decode), printing each frame as soon as it is decoded, so memory stays flat
/// however large the dump.
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
        let jpeg = try JPEGDecoder()
        let out = StandardOutput()
        var picture = I420Buffer()
        var summary = InspectSummary()
        var end = FrameStreamEnd.eof
        var begun = false
        /// `inspect --json`'s `sounds` array, written after the frames (a few hundred bytes a message).
        var soundItems: [String] = []
        // Printed at the first event, so nothing reaches stdout when the file cannot be opened.
        func begin() {
            guard !begun else { return }
            begun = true
            out.write(json ? "{\"frames\":[" : InspectedFrame.tableTitle + "\n")
        }
        let bytesRead = try DumpFile.read(path: path) { event in
            switch event {
            case .frame(let frame):
                begin()
                var item = InspectedFrame(header: frame.header, offset: frame.offset)
                // A raw I420 body needs no decode: the wire decoder has checked its exact length.
                if frame.header.format == .jpeg {
                    do {
                        let info = try jpeg.decodeI420(frame.body, into: &picture)
                        item.jpegSize = (info.width, info.height)
                    } catch {
                        item.decodeError = "\(error)"
                    }
                }
                if json {
                    out.write((summary.frames > 0 ? "," : "") + item.json.serialized)
                } else {
                    out.write(item.tableRows(index: summary.frames) + "\n")
                }
                summary.add(item)
            case .sound(let sound):
                begin()
                var level = SoundLevel()
                level.add(sound.body)
                if json {
                    soundItems.append(InspectSummary.soundJSON(sound, level: level).serialized)
                } else {
                    out.write(InspectSummary.soundRow(sound, index: summary.sound.messages, level: level) + "\n")
                }
                summary.add(sound)
            case .end(let streamEnd):
                end = streamEnd
            }
        }
        let ending = StreamEnding(end: end, bytesRead: bytesRead)
        // Not one frame, and the first bytes are no status line: not a dump at all. One line on stderr (the
        // table and its summary would only repeat it).
        if !json, summary.frames == 0, summary.sound.messages == 0, case .error(let error) = end, error.kind == "badStatusLine" {
            throw DumpToolError.io(path, "not a frame dump: \(StreamEnding.message(error, bytesRead: bytesRead))")
        }
        begin()
        if json {
            out.write("],\"sounds\":[" + soundItems.joined(separator: ",") + "],\"sound\":\(summary.sound.json.serialized)")
            out.write(",\"end\":\(JSONValue.string(end.name).serialized),\"error\":\(ending.json.serialized)}\n")
        } else {
            out.write(summary.line(end: ending) + "\n")
        }
        try out.finish()
        if !json, end != .eof { Console.error("screencast-dump: \(path): \(ending.text)") }
        return end == .eof ? ExitCode.success : ExitCode.failure
    }
}
