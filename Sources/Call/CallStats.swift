import Foundation
import ScreencastSupport
import Sharing
import Synchronization
import VideoSource

/// `/stats`: what a person asks first (version, uptime, the viewer page), then the source's numbers with the
/// viewers beside them; and the same as a few lines of text (`/stats?format=text`).
enum CallStats {
    /// The call's facts that are not counters.
    final class About: Sendable {
        private let clock: any VideoClock
        /// When the call started, µs on `clock` (CLOCK_MONOTONIC for the system clock).
        let startedMicros: UInt64
        /// The most viewers at once.
        let maxViewers: Int
        /// The viewer page's URL without the token (set once the server listens).
        let viewerURL = Mutex<String?>(nil)

        init(maxViewers: Int, clock: any VideoClock) {
            self.clock = clock
            startedMicros = clock.nowMicros()
            self.maxViewers = maxViewers
        }

        /// Seconds since the call started.
        var uptimeSeconds: Double { Double(clock.nowMicros() - startedMicros) / 1e6 }
    }

    /// The `/stats` JSON: the facts, the source's numbers, then `viewers` (the viewers output), `e2ee` (with
    /// `audio`: the sound's key index and Opus packet counts, when it is encrypted), and every other output's
    /// entry (`sfu`) in the order they were added.
    static func json(
        source: VideoSource, viewers: JSONValue, e2ee: EncryptingSink?, e2eeAudio: EncryptingAudioSink? = nil, about: About,
        outputs: [(key: String, value: JSONValue)]
    ) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("version", .string(ScreencastVersion.string)),
            ("uptimeSeconds", .double((about.uptimeSeconds * 10).rounded() / 10)),
            ("viewerURL", about.viewerURL.withLock { $0 }.map { .string($0) } ?? .null),
            ("maxViewers", .number(about.maxViewers)),
        ]
        if case .object(let sourceFields) = source.stats.json { fields += sourceFields }
        fields.append(("viewers", viewers))
        var e2eeJSON = e2ee?.json ?? EncryptingSink.disabledJSON
        if let audio = e2eeAudio?.stats, case .object(var e2eeFields) = e2eeJSON {
            e2eeFields.append(("audio", .object([
                ("keyIndex", .number(audio.keyIndex)), ("pendingKeyIndex", audio.pendingKeyIndex.map { .number($0) } ?? .null),
                ("framesEncrypted", .uint(audio.framesEncrypted)), ("framesDropped", .number(audio.framesDropped)),
            ])))
            e2eeJSON = .object(e2eeFields)
        }
        fields.append(("e2ee", e2eeJSON))
        for output in outputs { fields.append((output.key, output.value)) }
        return .object(fields)
    }

    /// A short summary for people, from the JSON above (so both always agree):
    ///
    ///     screencast-call 0.4.0, up 1 h 02 min; viewer page http://127.0.0.1:8080/
    ///     source: screen 1280x720, 28.4 fps, 1834 kbps (target 2211 kbps); agent on display :0 captures
    ///       monitor HDMI-1 1280x720+1920+0 at up to 30 fps
    ///     viewers: 2 connected of 16 allowed; 1 ended recently
    ///       viewer 3f2a9c1e from 192.0.2.7:50312: connected, 1790 kbps, RTT 3 ms; end-to-end encrypted, key index 0
    /// `ADDRESS:PORT` as a person reads it: an IPv6 address in brackets (`[fd00::2]:37824`, RFC 3986 §3.2.2),
    /// anything else unchanged.
    static func bracketedIPv6(_ endpoint: String) -> String {
        guard !endpoint.hasPrefix("["), endpoint.filter({ $0 == ":" }).count > 1,
              let colon = endpoint.lastIndex(of: ":") else { return endpoint }
        return "[\(endpoint[..<colon])]\(endpoint[colon...])"
    }

    static func text(_ stats: JSONValue) -> String {
        guard case .object(let top) = stats else { return "no stats\n" }
        let fields = Dictionary(top, uniquingKeysWith: { first, _ in first })
        func number(_ value: JSONValue?) -> Double? { value?.numberValue }
        func string(_ value: JSONValue?) -> String? { value?.stringValue }
        func object(_ value: JSONValue?) -> [String: JSONValue] { value?.fields ?? [:] }
        func count(_ value: JSONValue?) -> Int { if case .array(let a)? = value { a.count } else { 0 } }
        var lines: [String] = []
        let uptime = Int(number(fields["uptimeSeconds"]) ?? 0)
        let up = uptime >= 3600 ? String(format: "%d h %02d min", uptime / 3600, uptime / 60 % 60)
            : uptime >= 60 ? "\(uptime / 60) min \(uptime % 60) s" : "\(uptime) s"
        lines.append("screencast-call \(string(fields["version"]) ?? "?"), up \(up)"
            + (string(fields["viewerURL"]).map { "; viewer page \($0)" } ?? "; no viewer page"))
        let screen = object(fields["screen"])
        let captured = object(screen["agent"])
        let agent = if case .bool(true)? = screen["connected"] {
            captured.isEmpty ? "agent connected"
                : "agent on display \(string(captured["display"]) ?? "?") captures \(string(captured["area"]) ?? "?") "
                    + "\(string(captured["rect"]) ?? "?") at up to \(string(captured["fpsAsked"]) ?? "?") fps"
        } else { "no agent connected" }
        let size = "\(Int(number(fields["width"]) ?? 0))x\(Int(number(fields["height"]) ?? 0))"
        lines.append("source: \(string(fields["source"]) ?? "none") \(size), "
            + String(format: "%.1f fps, %.0f kbps", number(fields["fps"]) ?? 0, number(fields["kbps"]) ?? 0)
            + (number(fields["bitrateKbps"]).map { " (target \(Int($0)) kbps)" } ?? "") + "; \(agent)")
        let viewers = object(fields["viewers"])
        let connected = Int(number(viewers["connected"]) ?? 0)
        let connecting = Int(number(viewers["count"]) ?? 0) - connected
        let silent = Int(number(viewers["silent"]) ?? 0)
        lines.append("viewers: \(connected) connected" + (silent > 0 ? " (\(silent) silent: gone, most likely)" : "")
            + (connecting > 0 ? ", \(connecting) connecting" : "")
            + " of \(Int(number(fields["maxViewers"]) ?? 0)) allowed; \(count(viewers["ended"])) ended recently"
            + (number(object(fields["e2ee"])["keyIndex"]).map { "; end-to-end encrypted, key index \(Int($0))" } ?? ""))
        // One line per viewer: who (the address it watches from), its state and what it gets now.
        if case .array(let peers)? = viewers["peers"] {
            for case .object(let pairs) in peers {
                let peer = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
                let remote = Self.bracketedIPv6(string(object(peer["pair"])["remote"]) ?? "-")
                let silentFor = number(object(peer["consent"])["silentMs"]).map { Int($0 / 1000) } ?? 0
                let state = string(peer["state"]) ?? "?"
                lines.append("  viewer \(string(peer["id"])?.prefix(8) ?? "?") from \(remote): "
                    + (peer["silent"] == .bool(true) ? "silent for \(silentFor) s" : state) + ", "
                    + String(format: "%.0f kbps", number(peer["kbps"]) ?? 0)
                    + (number(peer["rttMs"]).map { String(format: ", RTT %.0f ms", $0) } ?? ""))
            }
        }
        let sfu = object(fields["sfu"])
        if let state = string(sfu["state"]) {
            lines.append("sfu: \(state) at \(string(sfu["server"]) ?? "?"), \(Int(number(sfu["reconnects"]) ?? 0)) reconnects"
                + (string(sfu["lastReason"]).map { "; last: \($0)" } ?? ""))
        }
        // One line per RTMP destination and recording of the H.264/VP8 streams (an entry with a "destination").
        for (name, value) in top {
            let out = object(value)
            guard let destination = string(out["destination"]), let state = string(out["state"]) else { continue }
            let int = { (key: String) in Int(number(out[key]) ?? 0) }
            lines.append("\(name): \(state), \(destination); queue \(int("queueFrames")) frames (\(int("queueMs")) ms), "
                + "\(int("sentKbps")) of \(int("targetKbps")) kbps, "
                + String(format: "%.0f of %.0f fps", number(out["sentFps"]) ?? 0, number(out["encoderFps"]) ?? 0)
                + ", dropped \(int("dropped")) (sound \(int("droppedAudio"))), \(int("reconnects")) reconnects, up \(int("uptimeSeconds")) s"
                + (string(out["lastReason"]).map { "; last: \($0)" } ?? ""))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
