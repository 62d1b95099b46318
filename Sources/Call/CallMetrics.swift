import Foundation
import PeerConnection
import ScreencastSupport
import Sharing
import VideoSource

/// `/metrics`: the call's counters in the Prometheus text format 0.0.4 (``MetricsText``), named by the
/// Prometheus conventions (prometheus.io/docs/practices/naming: base units, `_total` counters, `_seconds`,
/// `_bytes`, `_bits_per_second`). Built from the counters `/stats` shows (``VideoSourceStats``,
/// ``ViewerHub/Metrics``, ``EncryptingSink/Stats``, each output's stats) at each scrape; nothing is counted
/// twice.
///
/// Labels have bounded values: `reason` (the seven ``DropReason``s), `state`, `output` (the outputs the
/// configuration names), and `viewer`, a viewer's session id, only while that viewer is there (at most
/// `--max-viewers` at once): its series end when it leaves.
enum CallMetrics {
    /// The quantiles of the summaries (capture → sent latency, encode time).
    static let quantiles = [0.5, 0.99]

    /// The whole exposition.
    static func text(
        source: VideoSourceStats, viewers: ViewerHub.Metrics, maxViewers: Int, e2ee: EncryptingSink.Stats?,
        outputs: [(name: String, stats: JSONValue?)], process: ProcessMetrics?
    ) -> String {
        var m = MetricsText()
        m.family("screencast_build_info", .gauge, help: "Always 1; the version of screencast that serves these metrics.")
        m.sample("screencast_build_info", ["version": ScreencastVersion.string], 1)
        writeSource(source, to: &m)
        writeViewers(viewers, maxViewers: maxViewers, to: &m)
        writeOutputs(outputs, to: &m)
        if let e2ee {
            m.single("screencast_e2ee_frames_encrypted_total", .counter, help: "Frames encrypted end to end (all keys).",
                     Double(e2ee.framesEncrypted))
            m.single("screencast_e2ee_frames_dropped_total", .counter, help: "Frames dropped because encryption failed (never sent in the clear).",
                     Double(e2ee.framesDropped))
            m.single("screencast_e2ee_key_rotations_total", .counter, help: "Key rotations completed.", Double(e2ee.rotations))
        }
        process?.write(to: &m)
        return m.text
    }

    /// The video source: frames in, encoded, dropped; encode time; the encoder's target and output rates.
    static func writeSource(_ s: VideoSourceStats, to m: inout MetricsText) {
        m.single("screencast_frames_received_total", .counter, help: "Frames read from the agent's socket or the dump file.",
                 Double(s.received))
        m.single("screencast_frames_captured_total", .counter,
                 help: "Pictures handed to the video source by any capturer (decoded frames, test-pattern frames).", Double(s.submitted))
        m.single("screencast_frames_encoded_total", .counter,
                 help: "Encoded VP8 frames delivered to the outputs (new frames, refinements, repeats).", Double(s.encoded))
        m.single("screencast_keyframes_encoded_total", .counter, help: "Encoded VP8 keyframes.", Double(s.keyframes))
        m.single("screencast_encoded_bytes_total", .counter, help: "Bytes of encoded VP8 frames.", Double(s.encodedBytes))
        m.family("screencast_frames_dropped_total", .counter, help: "Frames that did not become an encoded frame of their own, by reason.")
        for reason in DropReason.allCases { m.sample("screencast_frames_dropped_total", ["reason": reason.rawValue], Double(s.dropped(reason))) }
        m.family("screencast_encode_seconds", .summary, help: "VP8 encode time per frame (quantiles over the last 128 encodes).")
        let percentiles = s.encoded > 0 ? [s.encodeMillisP50 / 1000, s.encodeMillisP99 / 1000] : [nil, nil]
        m.summarySamples(
            "screencast_encode_seconds", quantiles: Array(zip(quantiles, percentiles)), sum: s.encodeMillisTotal / 1000, count: Double(s.encoded))
        m.single("screencast_encoder_target_bits_per_second", .gauge, help: "The VP8 encoder's bitrate target.", Double(s.bitrateKbps * 1000))
        m.single("screencast_encoder_output_bits_per_second", .gauge, help: "The VP8 encoder's output rate over the last 5 s.", s.kbps * 1000)
        m.single("screencast_keyframe_requests_total", .counter, help: "Keyframe requests the encoder received (viewers, PLI, FIR).",
                 Double(s.keyframeRequests))
        m.single("screencast_agent_connected", .gauge, help: "1 while an agent is connected to the call's socket.", s.screenConnected ? 1 : 0)
        m.single("screencast_agent_connections_total", .counter, help: "Connections to the call's socket accepted.", Double(s.connections))
        m.single("screencast_agent_watchdog_drops_total", .counter, help: "Agents dropped by the watchdog for sending nothing.",
                 Double(s.watchdogDrops))
    }

    /// The viewers: how many, the sessions, and per viewer there now its RTCP view, feedback and send counters.
    static func writeViewers(_ v: ViewerHub.Metrics, maxViewers: Int, to m: inout MetricsText) {
        let connected = v.peers.filter { $0.snapshot.state == .connected }
        m.family("screencast_viewers", .gauge, help: "Viewers there now: connecting, connected, and of those connected the silent ones.")
        m.sample("screencast_viewers", ["state": "connecting"], Double(v.peers.count - connected.count))
        m.sample("screencast_viewers", ["state": "connected"], Double(connected.count))
        m.sample("screencast_viewers", ["state": "silent"], Double(connected.filter(\.silent).count))
        m.single("screencast_viewers_max", .gauge, help: "The most viewers at once (--max-viewers).", Double(maxViewers))
        m.family("screencast_viewer_sessions_total", .counter, help: "WHEP sessions created, refused and given up to a newcomer.")
        m.sample("screencast_viewer_sessions_total", ["result": "created"], Double(v.sessionsCreated))
        m.sample("screencast_viewer_sessions_total", ["result": "refused"], Double(v.sessionsRefused))
        m.sample("screencast_viewer_sessions_total", ["result": "given_up"], Double(v.sessionsGivenUp))
        m.single("screencast_viewer_keyframe_requests_total", .counter, help: "Keyframe requests from viewers (PLI, FIR, lobby).",
                 Double(v.keyframeRequests))
        m.single("screencast_viewer_bitrate_changes_total", .counter, help: "Encoder bitrate changes the viewers' estimates made.",
                 Double(v.bitrateChanges))
        if let applied = v.appliedBitsPerSecond {
            m.single("screencast_viewer_bitrate_applied_bits_per_second", .gauge, help: "The encoder bitrate the viewers' estimates set.",
                     Double(applied))
        }

        // Per viewer: (name, type, help, value or nil to leave the viewer out).
        typealias Series = (String, MetricsText.Kind, String, (ViewerHub.Metrics.Peer) -> Double?)
        let series: [Series] = [
            ("screencast_viewer_rtt_seconds", .gauge, "Round-trip time from the viewer's last RTCP receiver report (RFC 3550 §6.4.1).",
             { $0.snapshot.sender.reports.link.roundTripMillis.map { $0 / 1000 } }),
            ("screencast_viewer_jitter_seconds", .gauge, "Interarrival jitter the viewer reports (RFC 3550 §6.4.1).",
             { $0.snapshot.sender.reports.jitterMillis.map { $0 / 1000 } }),
            ("screencast_viewer_loss_ratio", .gauge, "Fraction of packets lost the viewer's last receiver report gives, 0 to 1.",
             { $0.snapshot.sender.reports.link.fractionLost }),
            ("screencast_viewer_packets_lost", .gauge, "Cumulative packets lost the viewer reports (RFC 3550 §6.4.1).",
             { Double($0.snapshot.sender.reports.cumulativeLost) }),
            ("screencast_viewer_nacks_received_total", .counter, "Generic NACKs received (RFC 4585 §6.2.1).",
             { Double($0.snapshot.sender.nack.nacksReceived) }),
            ("screencast_viewer_packets_retransmitted_total", .counter, "Packets retransmitted on NACKs.",
             { Double($0.snapshot.sender.nack.packetsRetransmitted) }),
            ("screencast_viewer_plis_received_total", .counter, "Picture Loss Indications received (RFC 4585 §6.3.1).",
             { Double($0.snapshot.sender.keyframes.plisReceived) }),
            ("screencast_viewer_firs_received_total", .counter, "Full Intra Requests received (RFC 5104 §4.3.1).",
             { Double($0.snapshot.sender.keyframes.firsReceived) }),
            ("screencast_viewer_frames_sent_total", .counter, "Frames sent to the viewer.",
             { Double($0.snapshot.sender.stream.framesSent) }),
            ("screencast_viewer_keyframes_sent_total", .counter, "Keyframes sent to the viewer.",
             { Double($0.snapshot.sender.stream.keyframesSent) }),
            ("screencast_viewer_packets_sent_total", .counter, "RTP packets sent to the viewer.",
             { Double($0.snapshot.sender.stream.packetsSent) }),
            ("screencast_viewer_sent_bytes_total", .counter, "Bytes handed to ICE for the viewer (SRTP, SRTCP, DTLS).",
             { Double($0.snapshot.bytesSent) }),
            ("screencast_viewer_send_bits_per_second", .gauge, "What the viewer is sent now.", { $0.sendBitsPerSecond }),
            ("screencast_viewer_congestion_target_bits_per_second", .gauge,
             "The transport-wide congestion controller's target for the viewer (GCC; absent without TWCC).",
             { $0.snapshot.sender.congestion.map { Double($0.targetBitsPerSecond) } }),
            ("screencast_viewer_remb_bits_per_second", .gauge, "The viewer's last REMB estimate (absent before one).",
             { $0.snapshot.sender.remb.estimatedBitrate.map { Double($0) } }),
        ]
        for (name, kind, help, value) in series {
            let values = v.peers.compactMap { peer in value(peer).map { (peer.snapshot.id, $0) } }
            guard !values.isEmpty else { continue }
            m.family(name, kind, help: help)
            for (id, value) in values { m.sample(name, [("viewer", id)], value) }
        }
        guard !v.peers.isEmpty else { return }
        m.family("screencast_viewer_capture_to_sent_seconds", .summary,
                 help: "From a frame's capture to its last RTP packet leaving for the viewer (quantiles over the last 2048 frames).")
        for peer in v.peers {
            let latency = peer.snapshot.sender.latency
            let values = latency.quantilesMicros(quantiles).map { $0.map { Double($0) / 1e6 } }
            m.summarySamples(
                "screencast_viewer_capture_to_sent_seconds", [("viewer", peer.snapshot.id)], quantiles: Array(zip(quantiles, values)),
                sum: Double(latency.totalMicros) / 1e6, count: Double(latency.frames))
        }
    }

    /// Each output but the viewers: its state (from its stats' `state`, else `running`) and, where its stats
    /// have them, frames and bytes sent and reconnects.
    static func writeOutputs(_ outputs: [(name: String, stats: JSONValue?)], to m: inout MetricsText) {
        guard !outputs.isEmpty else { return }
        func field(_ stats: JSONValue?, _ key: String) -> JSONValue? {
            guard case .object(let fields)? = stats else { return nil }
            return fields.first { $0.0 == key }?.1
        }
        func number(_ value: JSONValue?) -> Double? {
            switch value {
            case .int(let n)?: Double(n)
            case .uint(let n)?: Double(n)
            case .double(let n)?: n
            default: nil
            }
        }
        m.family("screencast_output_state", .gauge, help: "1 for each output (recording, SFU leg, RTMP, MP4) in its state now.")
        for output in outputs {
            let state = if case .string(let s)? = field(output.stats, "state") { s } else { "running" }
            m.sample("screencast_output_state", [("output", output.name), ("state", state)], 1)
        }
        for (key, name, help) in [
            ("framesSent", "screencast_output_frames_sent_total", "Frames an output sent or wrote."),
            ("bytesSent", "screencast_output_sent_bytes_total", "Bytes an output sent or wrote."),
            ("reconnects", "screencast_output_reconnects_total", "Reconnections of an output to its destination."),
        ] {
            let values = outputs.compactMap { output in number(field(output.stats, key)).map { (output.name, $0) } }
            guard !values.isEmpty else { continue }
            m.family(name, .counter, help: help)
            for (output, value) in values { m.sample(name, [("output", output)], value) }
        }
    }
}
