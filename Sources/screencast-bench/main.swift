import Foundation
import Media
import ScreencastSupport

/// `screencast-bench`: micro-benchmarks of single pipeline stages (release builds only give meaningful
/// numbers: `swift build -c release --product screencast-bench`). `tools/bench` runs it and the end-to-end
/// measurements; results are medians over repeated runs with min–max.
let usage = """
    Usage: screencast-bench [--stage NAME]... [--repeat N] [--json] [--display D]
                            [--content NAME=DUMP]...
           screencast-bench viewers --url URL [--count N] [--seconds S]    (see 'viewers --help')
           screencast-bench gcc-sim [--profile steps|bottleneck|loss]       (see 'gcc-sim --help')

    Stages (default: all that need no display and no dump, plus those whose inputs are given):
      parse-1080p   FrameWire decoder over a stream of 1920x1080-sized messages (GB/s), socket-style
                    reads
      parse-tiny    FrameWire decoder over a stream of 200-byte messages (messages/s)
      jpeg-decode   JPEG → I420 at 1920x1080 and 3840x2160 (synthetic q80 4:2:0), and each --content
                    dump
      jpeg-encode   BGRX → JPEG q80 4:2:0 and 4:4:4 (the agent's path) and I420 → JPEG, synthetic
                    pictures
      rotation      I420 rotation by 90° and 180° with libyuv at 1920x1080 and 3840x2160
      range         BT.601 full → limited range in place (the call's conversion after a JPEG decode) at
                    1920x1080 and 3840x2160, with the alternatives: a Swift table loop, libyuv
                    ARGBPolynomial
      vp8-unchanged VP8 re-encode of an unchanged picture (the call's idle repeat), both sizes
      vp8           VP8 encode (the call's settings) of each --content dump, frame by frame
      damage        Buffer-Damage at 1080p, interleaved: whole-slot BGRX → I420 against copy + convert
                    of the damage (typing, window, scroll, whole), and the agent's whole 8 MB slot
                    write against the damage only (ms)
      opus          the call's Opus encoding of 10 s of stereo music at 96 kbps, 20-ms packets (µs a
                    packet, % of a core)
      frame-crypto  E2EE: AES-GCM encrypt of a 1080p VP8 keyframe and delta frame (µs), PBKDF2 key
                    derivation
      shm-capture   MIT-SHM grab of the whole screen of --display, then BGRX → JPEG of that screen
      ratecontrol   what the call's encoder loop emits (new frames, refinements, repeats, keyframes)
                    against targets of 2000, 1000, 500 and 300 kbps, each --content dump (default:
                    Tests/Fixtures' terminal-scroll, window-drag, static-desktop) looped in virtual
                    time; prints a table

    Options:
      --stage NAME         run only this stage (repeatable)
      --repeat N           measured runs per stage (default 7; vp8 uses min(N, 3))
      --json               print one JSON array instead of the table
      --display D          X display for shm-capture (e.g. :5); repeatable for several screen sizes
      --content NAME=DUMP  a .frames dump (screencast-agent --output) for vp8 and jpeg-decode;
                           repeatable
      --max-frames N       vp8: frames of each dump per run (default 150)
      --vp8-cpu-used N     vp8: libvpx speed, -16 (fastest) ... -1 (default: the call's, -6)
      --size WxH           ratecontrol: scale every picture to this size first (default 1280x720;
                           "native" keeps it)
      --seconds S          ratecontrol: virtual seconds per run, 4-600 (default 20)
      --version            print the version
      -h, --help           this text

    Exit codes: 0 done, 1 a stage failed, 64 bad usage (a reason, then a pointer to --help).
    """

func main() throws -> Int32 {
    var words = Array(CommandLine.arguments.dropFirst())
    if words.first == "--version" { print("screencast-bench \(ScreencastVersion.string)"); return 0 }
    // `-h` as the other executables take it, for the tool and each command.
    words = words.map { $0 == "-h" ? "--help" : $0 }
    if words.first == "viewers" {
        words.removeFirst()
        return try ViewersCommand.run(words)
    }
    if words.first == "gcc-sim" { return try GCCSimCommand.run(Array(words.dropFirst())) }
    let arguments = try CommandLineArguments(
        words, options: ["stage", "repeat", "display", "content", "max-frames", "vp8-cpu-used", "size", "seconds"], flags: ["json", "help"])
    if arguments.has("help") { print(usage); return 0 }
    let runs = try arguments.int("repeat", in: 1...1000) ?? 7
    let maxFrames = try arguments.int("max-frames", in: 1...100_000) ?? 150
    let cpuUsed = try arguments.int("vp8-cpu-used", in: -16 ... -1)
    let displays = arguments.strings("display")
    var dumps: [(String, DumpFrames)] = []
    var dumpPaths: [(name: String, path: String)] = []
    for spec in arguments.strings("content") {
        guard let eq = spec.firstIndex(of: "="), eq != spec.startIndex else { throw UsageError("--content wants NAME=DUMP, got '\(spec)'") }
        dumpPaths.append((String(spec[..<eq]), String(spec[spec.index(after: eq)...])))
        // A dump that cannot be read is the command line's fault (exit 64), as for the other executables.
        do { dumps.append((dumpPaths.last!.name, try DumpFrames(path: dumpPaths.last!.path))) } catch let error as BenchError {
            throw UsageError("--content \(spec): \(error)")
        }
    }
    let all = ["parse-1080p", "parse-tiny", "jpeg-decode", "jpeg-encode", "rotation", "range", "vp8-unchanged", "vp8", "frame-crypto", "shm-capture", "ratecontrol", "damage", "opus"]
    var stages = arguments.strings("stage")
    if stages.isEmpty {
        stages = all.filter { ($0 != "vp8" || !dumps.isEmpty) && ($0 != "shm-capture" || !displays.isEmpty) && $0 != "ratecontrol" }
    }
    if let unknown = stages.first(where: { !all.contains($0) }) { throw UsageError("unknown stage '\(unknown)'") }
    if stages.contains("vp8"), dumps.isEmpty { throw UsageError("stage vp8 needs --content NAME=DUMP") }
    if stages.contains("shm-capture"), displays.isEmpty { throw UsageError("stage shm-capture needs --display") }

    let json = arguments.has("json")
    var results: [Measurement] = []
    for stage in stages {
        let measured: [Measurement]
        switch stage {
        case "parse-1080p": measured = [ParseStage.large(runs: runs)]
        case "parse-tiny": measured = [ParseStage.tiny(runs: runs)]
        case "jpeg-decode": measured = try JPEGStages.decode(runs: runs, dumps: dumps)
        case "jpeg-encode": measured = try JPEGStages.encodeBGRX(runs: runs) + JPEGStages.encodeI420(runs: runs)
        case "rotation": measured = try RotationStage.measure(runs: runs)
        case "range": measured = try RangeStage.measure(runs: runs)
        case "vp8-unchanged": measured = try VP8Stage.unchanged(runs: runs)
        case "vp8": measured = try VP8Stage.measure(runs: min(runs, 3), dumps: dumps, maxFrames: maxFrames, cpuUsed: cpuUsed)
        case "frame-crypto": measured = try FrameCryptoStage.measure(runs: runs)
        case "opus": measured = try OpusStage.measure(runs: runs)
        case "damage": measured = try DamageStage.measure(runs: runs)
        case "shm-capture": measured = try displays.flatMap { try ShmCaptureStage.measure(display: $0, runs: runs) }
        case "ratecontrol":
            let sizeText = arguments.string("size") ?? "1280x720"
            let size = sizeText == "native" ? nil : PictureSize(parsing: sizeText)
            if sizeText != "native", size == nil { throw UsageError("--size wants WxH or native, got '\(sizeText)'") }
            let seconds = try arguments.double("seconds", in: 4...600) ?? 20
            let inputs = dumpPaths.isEmpty
                ? ["terminal-scroll", "window-drag", "static-desktop"].map { ($0, "Tests/Fixtures/\($0).frames") } : dumpPaths
            let rows = try RateControlStage.measure(dumps: inputs, size: size, seconds: seconds)
            print(RateControlStage.table(rows, size: sizeText, seconds: seconds))
            measured = []
        default: measured = []
        }
        if !json { measured.forEach { print($0.line) } }
        results += measured
    }
    if json { print(JSONValue.array(results.map(\.json)).serialized) }
    return 0
}

do {
    exit(try main())
} catch let error as UsageError {
    FileHandle.standardError.write(Data("screencast-bench: \(error.reason)\nTry 'screencast-bench --help'.\n".utf8))
    exit(ExitCode.usage)
} catch {
    FileHandle.standardError.write(Data("screencast-bench: \(error)\n".utf8))
    exit(ExitCode.failure)
}
