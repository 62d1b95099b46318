import Dispatch
import Foundation
import ScreencastSupport
import VideoSource

/// Prints the source's stats as one log line (and optionally writes them as JSON to a file).
struct StatsReporter: Sendable {
    let source: VideoSource
    let logger: Logger
    let file: String?
    /// Viewers connected or connecting now.
    var viewers: @Sendable () -> Int = { 0 }
    /// The SFU leg's state and reconnects ("-" without one).
    var sfu: @Sendable () -> String = { "-" }
    /// Logs a line per RTMP destination and MP4 recording (`final` at the end).
    var streams: @Sendable (_ final: Bool) -> Void = { _ in }

    /// A repeating timer on a queue of its own; nil when `seconds` is 0.
    func schedule(every seconds: Double) -> (any DispatchSourceTimer)? {
        guard seconds > 0 else { return nil }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "screencast.stats"))
        let interval = DispatchTimeInterval.milliseconds(Int(seconds * 1000))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { report(final: false) }
        timer.resume()
        return timer
    }

    func report(final: Bool) {
        let s = source.stats
        let ms = { (value: Double) in String(format: "%.1f", value) }
        logger.info(final ? "final" : "stats", [
            "source": s.source?.rawValue ?? "none", "size": "\(s.width)x\(s.height)",
            "received": s.received, "decoded": s.decoded, "encoded": s.encoded, "keyframes": s.keyframes,
            "refinements": s.refinements, "repeats": s.repeats,
            "dropped.decode": s.dropped(.decodeError), "dropped.stale": s.dropped(.stale),
            "dropped.unchanged": s.dropped(.unchanged), "dropped.inactive": s.dropped(.inactive),
            "dropped.encoder": s.dropped(.encoder), "dropped.error": s.dropped(.encodeError),
            "dropped.tooLarge": s.dropped(.tooLarge), "downscaled": s.downscaled, "pool.bytes": s.poolBytes,
            "fps": ms(s.fps), "kbps": ms(s.kbps), "kbps.target": s.bitrateKbps,
            "encode.p50": ms(s.encodeMillisP50), "encode.p95": ms(s.encodeMillisP95),
            "queue": s.queueDepth, "senders": s.senders, "senders.total": s.sendersTotal, "watchdog": s.watchdogDrops, "peers": viewers(),
            "sfu": sfu(),
        ])
        streams(final)
        if let file {
            let text = s.json.serialized + "\n"
            let temporary = file + ".tmp"
            if FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) {
                _ = rename(temporary, file)
            } else {
                logger.warning("stats file not written", ["path": file])
            }
        }
    }
}
