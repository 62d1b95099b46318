import Call
import Foundation
import ScreencastSupport
import Streaming

/// `--rtmp URL` (repeatable) `[--rtmp-key-file FILE]… [--rtmp-bitrate KBPS] [--rtmp-retries N] [--record FILE.mp4]`:
/// the outputs of the H.264 encoding (issue 29).
enum StreamingOptions {
    static let valueOptions: Set<String> = ["rtmp", "rtmp-key-file", "rtmp-bitrate", "rtmp-retries", "record"]

    static let usage = """

        Going live over RTMP and recording (one H.264 encoding, libx264, for all of them; see README):
          --rtmp URL               publish FLV over RTMP to URL: rtmp://HOST[:PORT]/APP/KEY or rtmps://…
                                   (the stream key is the last path element); repeat for several
                                   destinations at once. Reconnects at once, then after 2 s, 5 s, 10 s and
                                   every 10 s; /stats shows each under "rtmp-N"
          --rtmp-key-file FILE     the stream key from FILE (one line), appended to the --rtmp URL
                                   (then rtmp://HOST/APP), so it is not in ps; repeat once per --rtmp
          --rtmp-bitrate KBPS      the H.264 target, 100-100000 (CBR, 1-s VBV; default width x height x
                                   fps x 0.08)
          --rtmp-retries N         failed attempts in a row before a destination gives up, 0-1000000
                                   (default 5; 0 = retry for ever)
          --record FILE.mp4        record the H.264 and AAC encodings to a fragmented MP4 (a kill loses at
                                   most the last ~2 s; the file still plays)
          --record FILE.webm       record the viewers' VP8 and Opus frames as they are to WebM (no
                                   re-encoding; seekable once the call stops); one of each kind at most
        """

    /// The streaming part of the call's configuration.
    /// - Throws: ``UsageError`` (exit 64): a bad URL, a key file that does not read, a bad number, …
    static func configuration(_ arguments: CommandLineArguments) throws(UsageError) -> StreamingConfiguration {
        var streaming = StreamingConfiguration()
        let urls = arguments.strings("rtmp")
        let keyFiles = arguments.strings("rtmp-key-file")
        if !keyFiles.isEmpty, keyFiles.count != urls.count {
            throw UsageError("--rtmp-key-file: give one per --rtmp (\(urls.count) --rtmp, \(keyFiles.count) key files)")
        }
        for (index, text) in urls.enumerated() {
            var key: String?
            if index < keyFiles.count {
                guard let data = FileManager.default.contents(atPath: keyFiles[index]),
                      let line = String(data: data, encoding: .utf8)?.split(whereSeparator: \.isNewline).first else {
                    throw UsageError("--rtmp-key-file \(keyFiles[index]): cannot read a key from it")
                }
                key = String(line)
            }
            do {
                streaming.rtmp.append(try RTMPURL(text, key: key))
            } catch {
                throw UsageError("--rtmp: \(error)")
            }
        }
        if let kbps = try arguments.int("rtmp-bitrate", in: 100...100_000) { streaming.bitsPerSecond = kbps * 1000 }
        if let retries = try arguments.int("rtmp-retries", in: 0...1_000_000) { streaming.retries = retries }
        // One MP4 and one WebM at most (--record x.mp4 --record x.webm records both).
        for path in arguments.strings("record") {
            let lower = path.lowercased()
            guard lower.hasSuffix(".mp4") || lower.hasSuffix(".webm") else {
                throw UsageError("--record takes a FILE.mp4 or FILE.webm, not '\(path)'")
            }
            try PathArgument.writableFile(path, option: "--record")
            let webm = lower.hasSuffix(".webm")
            if let first = webm ? streaming.recordWebM : streaming.recordMP4 {
                throw UsageError("--record: two \(webm ? "WebM" : "MP4") recordings ('\(first)', '\(path)'): one of each kind at most")
            }
            if webm { streaming.recordWebM = path } else { streaming.recordMP4 = path }
        }
        return streaming
    }
}
