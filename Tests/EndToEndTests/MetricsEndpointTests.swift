import Foundation
import Glibc
import TestSupport
import XCTest

/// `/metrics` of a live `--share` call, scraped as Prometheus does and read by a real parser (prometheus_client
/// in the repo's venv, `Peers/metrics_check.py`, with promtool's lint rules), while an aiortc viewer joins,
/// watches and leaves. Everything in a loopback-only network namespace.
final class MetricsEndpointTests: XCTestCase {
    /// One scrape's report from metrics_check.py.
    struct Scrape {
        let report: [String: Any]
        var families: [String: Any] { report["families"] as? [String: Any] ?? [:] }

        /// The samples named `sample` whose labels include `labels`.
        func values(_ family: String, _ sample: String? = nil, _ labels: [String: String] = [:]) -> [Double] {
            let samples = (families[family] as? [String: Any])?["samples"] as? [[Any]] ?? []
            return samples.compactMap { entry in
                guard entry.count == 3, let name = entry[0] as? String, name == (sample ?? family),
                      let have = entry[1] as? [String: String], labels.allSatisfy({ have[$0.key] == $0.value }) else { return nil }
                return entry[2] as? Double ?? (entry[2] as? Int).map(Double.init)
            }
        }
        func value(_ family: String, _ sample: String? = nil, _ labels: [String: String] = [:]) -> Double? {
            values(family, sample, labels).first
        }
    }

    func testMetricsParseLintCleanAndFollowAViewer() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.MetricsEndpointTests/testMetricsParseLintCleanAndFollowAViewer", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let state = try TemporaryDirectory(prefix: "sc-metrics")
        defer { state.remove() }
        let call = try CallUnderTest(["--share", "--source", "testpattern", "--pattern-size", "320x240"], stateFolder: state.url.path)
        defer { call.stop() }
        let token = try String(contentsOfFile: state.path("screencast/share-token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let url = "https://127.0.0.1:\(call.port)/metrics"
        func scrape() throws -> Scrape {
            let report = try EndToEnd.runPeer(EndToEnd.venvPython, "metrics_check.py", ["--url", url, "--token=" + token, "--insecure"], timeout: 20)
            XCTAssertEqual(report["status"] as? Int, 200, "\(report)")
            XCTAssertEqual(report["statusWithoutToken"] as? Int, 401, "--share: /metrics needs the token, as /stats does")
            XCTAssertEqual(report["contentType"] as? String, "text/plain; version=0.0.4; charset=utf-8")
            XCTAssertTrue(report["error"] is NSNull, "prometheus_client could not parse /metrics: \(report["error"] ?? "")")
            XCTAssertEqual(report["lint"] as? [String], [], "lint")
            return Scrape(report: report)
        }

        // Before any viewer: the source's counters, no viewer series, the process and the build.
        usleep(500_000)
        let before = try scrape()
        XCTAssertEqual(before.value("screencast_build_info", nil, ["version": "0.1.0"]), 1)
        XCTAssertEqual(before.value("screencast_viewers", nil, ["state": "connected"]), 0)
        XCTAssertEqual(before.value("screencast_viewers_max"), 16)
        XCTAssertNil(before.families["screencast_viewer_rtt_seconds"], "no viewer, no per-viewer series")
        XCTAssertGreaterThan(before.value("screencast_frames_encoded_total") ?? 0, 0)
        XCTAssertEqual(before.values("screencast_frames_dropped_total").count, 7, "one series per drop reason")
        XCTAssertGreaterThan(before.value("process_resident_memory_bytes") ?? 0, 1_000_000)
        XCTAssertGreaterThan(before.value("process_open_fds") ?? 0, 3)
        let started = before.value("process_start_time_seconds") ?? 0
        XCTAssertLessThan(abs(Date().timeIntervalSince1970 - started), 60, "the call started within the last minute")
        XCTAssertGreaterThan(before.value("screencast_encode_seconds", "screencast_encode_seconds_count") ?? 0, 0)

        // A viewer joins and watches.
        let peer = try PythonPeer(
            EndToEnd.venvPython, "whep_viewer.py", ["--url", "https://127.0.0.1:\(call.port)/whep", "--token=" + token, "--insecure", "--seconds", "4"])
        var during = before
        let deadline = Date().addingTimeInterval(10)
        repeat {
            usleep(300_000)
            during = try scrape()
        } while (during.value("screencast_viewer_frames_sent_total") ?? 0) < 10 && Date() < deadline
        XCTAssertEqual(during.value("screencast_viewers", nil, ["state": "connected"]), 1, "\(during.families["screencast_viewers"] ?? "")")
        XCTAssertEqual(during.value("screencast_viewer_sessions_total", nil, ["result": "created"]), 1)
        XCTAssertEqual(during.values("screencast_viewer_frames_sent_total").count, 1, "one viewer, one series")
        XCTAssertGreaterThan(during.value("screencast_viewer_sent_bytes_total") ?? 0, 1000)
        XCTAssertGreaterThan(during.value("screencast_frames_encoded_total") ?? 0, before.value("screencast_frames_encoded_total") ?? 0)
        usleep(1_000_000)
        let later = try scrape()
        XCTAssertGreaterThan(later.value("screencast_viewer_frames_sent_total") ?? 0, during.value("screencast_viewer_frames_sent_total") ?? 0,
                             "the counter moves as frames flow")
        let latencyCount = later.value("screencast_viewer_capture_to_sent_seconds", "screencast_viewer_capture_to_sent_seconds_count") ?? 0
        XCTAssertGreaterThan(latencyCount, 0)
        let p50 = later.value("screencast_viewer_capture_to_sent_seconds", nil, ["quantile": "0.5"]) ?? -1
        XCTAssertGreaterThanOrEqual(p50, 0)
        XCTAssertLessThan(p50, 0.5, "capture → sent on loopback")
        print("e2e: /metrics with a viewer: \(later.values("screencast_viewer_capture_to_sent_seconds")) s capture → sent (p50, p99), "
              + "rtt \(later.values("screencast_viewer_rtt_seconds")) s")

        // It leaves: the gauges go back, its series end, the session counter stays.
        let report = try peer.finish(timeout: 30)
        XCTAssertNil((report["viewers"] as? [[String: Any]])?.first?["error"] as? String, "\(report)")
        var after = later
        let gone = Date().addingTimeInterval(10)
        repeat {
            usleep(300_000)
            after = try scrape()
        } while after.value("screencast_viewers", nil, ["state": "connected"]) != 0 && Date() < gone
        XCTAssertEqual(after.value("screencast_viewers", nil, ["state": "connected"]), 0)
        XCTAssertEqual(after.value("screencast_viewers", nil, ["state": "connecting"]), 0)
        XCTAssertNil(after.families["screencast_viewer_frames_sent_total"], "the viewer's series end when it leaves")
        XCTAssertEqual(after.value("screencast_viewer_sessions_total", nil, ["result": "created"]), 1)
    }
}
