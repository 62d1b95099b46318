import ScreencastSupport
import Signaling
import XCTest

/// ``MetricsText``, the Prometheus text format 0.0.4 writer, against the format's rules (prometheus.io/docs/
/// instrumenting/exposition_formats), and the `/metrics` route's access rule (that of `/stats`).
final class MetricsTextTests: XCTestCase {
    func testFamiliesAreWrittenWithHelpTypeAndSamples() {
        var m = MetricsText()
        m.single("a_total", .counter, help: "Things.", 3)
        m.family("b_seconds", .summary, help: "Time.")
        m.summarySamples("b_seconds", [("viewer", "v1")], quantiles: [(0.5, 0.25), (0.99, nil)], sum: 1.5, count: 4)
        m.family("c", .gauge, help: "Labelled.")
        m.sample("c", ["state": "on", "kind": "x"], -2)
        XCTAssertEqual(m.text, """
            # HELP a_total Things.
            # TYPE a_total counter
            a_total 3
            # HELP b_seconds Time.
            # TYPE b_seconds summary
            b_seconds{viewer="v1",quantile="0.5"} 0.25
            b_seconds{viewer="v1",quantile="0.99"} NaN
            b_seconds_sum{viewer="v1"} 1.5
            b_seconds_count{viewer="v1"} 4
            # HELP c Labelled.
            # TYPE c gauge
            c{state="on",kind="x"} -2

            """)
    }

    /// Label values: `\` → `\\`, `"` → `\"`, line feed → `\n`, everything else (UTF-8, tabs) as it is;
    /// HELP: `\` and line feed escaped, quotes kept.
    func testLabelValuesAndHelpAreEscapedAsTheFormatSays() {
        XCTAssertEqual(MetricsText.escapedLabelValue(#"a\b"c"# + "\nd\té"), #"a\\b\"c\nd"# + "\té")
        XCTAssertEqual(MetricsText.escapedLabelValue("plain"), "plain")
        XCTAssertEqual(MetricsText.escapedHelp("say \"hi\"\\\nnext"), #"say "hi"\\\nnext"#)
        var m = MetricsText()
        m.family("x", .gauge, help: "line one\nline two")
        m.sample("x", [("path", "C:\\dir\n\"q\"")], 1)
        XCTAssertEqual(m.text, "# HELP x line one\\nline two\n# TYPE x gauge\nx{path=\"C:\\\\dir\\n\\\"q\\\"\"} 1\n")
    }

    func testValuesAreGoFloatText() {
        XCTAssertEqual(MetricsText.formatted(0), "0")
        XCTAssertEqual(MetricsText.formatted(42), "42")
        XCTAssertEqual(MetricsText.formatted(-7), "-7")
        XCTAssertEqual(MetricsText.formatted(0.5), "0.5")
        XCTAssertEqual(MetricsText.formatted(1e-5), "1e-05")
        XCTAssertEqual(MetricsText.formatted(.infinity), "+Inf")
        XCTAssertEqual(MetricsText.formatted(-.infinity), "-Inf")
        XCTAssertEqual(MetricsText.formatted(.nan), "NaN")
        XCTAssertEqual(MetricsText.formatted(1_700_000_000.25), "1700000000.25")
        XCTAssertEqual(MetricsText.formatted(1e300), "1e+300", "beyond 2^53: not printed as an integer")
    }

    func testNamesFollowTheGrammar() {
        for good in ["a", "_a", "a:b_c9", "process_cpu_seconds_total"] { XCTAssertTrue(MetricsText.isMetricName(good), good) }
        for bad in ["", "9a", "a-b", "a b", "é"] { XCTAssertFalse(MetricsText.isMetricName(bad), bad) }
        for good in ["a", "_a", "viewer_id9"] { XCTAssertTrue(MetricsText.isLabelName(good), good) }
        for bad in ["", "__name", "a:b", "9a", "a-b"] { XCTAssertFalse(MetricsText.isLabelName(bad), bad) }
    }

    /// `/metrics` answers with the provider's text and the format's content type; with a token (as `--share`
    /// makes) only with it, in the header or `?token=`, exactly as `/stats`.
    func testMetricsRouteKeepsTheStatsAccessRule() {
        let logger = Logger(component: "test", threshold: .error)
        func router(token: String?) -> HTTPRouter {
            HTTPRouter(routes: SignalingServer.routes(
                configuration: SignalingConfiguration(token: token.flatMap(BearerToken.init)), sessions: FakeSessions(),
                stats: { .object([]) }, metrics: { "# HELP up Up.\n# TYPE up gauge\nup 1\n" }, logger: logger))
        }
        let open = router(token: nil).respond(to: HTTPRequest(method: "GET", path: "/metrics"))
        XCTAssertEqual(open.status, 200)
        XCTAssertEqual(open.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        XCTAssertEqual(String(decoding: open.body, as: UTF8.self), "# HELP up Up.\n# TYPE up gauge\nup 1\n")
        let guarded = router(token: "s3cret-token-123")
        XCTAssertEqual(guarded.respond(to: HTTPRequest(method: "GET", path: "/metrics")).status, 401)
        XCTAssertEqual(guarded.respond(to: HTTPRequest(method: "GET", path: "/metrics", headers: ["Authorization": "Bearer wrong"])).status, 401)
        XCTAssertEqual(
            guarded.respond(to: HTTPRequest(method: "GET", path: "/metrics", headers: ["Authorization": "Bearer s3cret-token-123"])).status, 200)
        XCTAssertEqual(guarded.respond(to: HTTPRequest(method: "GET", path: "/metrics", query: ["token": "s3cret-token-123"])).status, 200)
        let none = HTTPRouter(routes: SignalingServer.routes(
            configuration: SignalingConfiguration(), sessions: FakeSessions(), stats: { .object([]) }, logger: logger))
        XCTAssertEqual(none.respond(to: HTTPRequest(method: "GET", path: "/metrics")).status, 404)
    }

    /// `POST /control/kick/{id}`: from loopback only (a viewer on the LAN holds the share link's token too), then
    /// with the token; 404 for an unknown viewer.
    func testKickIsForThisMachineWithTheToken() {
        let logger = Logger(component: "test", threshold: .error)
        let router = HTTPRouter(routes: SignalingServer.routes(
            configuration: SignalingConfiguration(token: BearerToken("s3cret-token-123")), sessions: FakeSessions(), stats: { .object([]) },
            kick: { $0 == "v1" }, logger: logger))
        func kick(_ id: String, from address: String?, token: String? = "s3cret-token-123") -> Int {
            router.respond(to: HTTPRequest(
                method: "POST", path: "/control/kick/" + id, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:],
                clientAddress: address)).status
        }
        XCTAssertEqual(kick("v1", from: "127.0.0.1"), 200)
        XCTAssertEqual(kick("v1", from: "::1"), 200)
        XCTAssertEqual(kick("v1", from: "127.4.5.6"), 200)
        XCTAssertEqual(kick("v2", from: "127.0.0.1"), 404)
        XCTAssertEqual(kick("v1", from: "192.0.2.7"), 403, "a viewer on the LAN has the token too")
        XCTAssertEqual(kick("v1", from: "::ffff:192.0.2.7"), 403)
        XCTAssertEqual(kick("v1", from: nil), 403)
        XCTAssertEqual(kick("v1", from: "127.0.0.1", token: nil), 401)
        XCTAssertEqual(kick("v1", from: "127.0.0.1", token: "wrong"), 401)
        XCTAssertEqual(router.respond(to: HTTPRequest(method: "GET", path: "/control/kick/v1", clientAddress: "127.0.0.1")).status, 405)
        // A web page the sharer has open (a cross-site form POST carries Origin), and a token in the URL a page
        // could build from a share link: refused even from loopback with the right token.
        let forged = router.respond(to: HTTPRequest(
            method: "POST", path: "/control/kick/v1", headers: ["Authorization": "Bearer s3cret-token-123", "Origin": "https://evil.example"],
            clientAddress: "127.0.0.1"))
        XCTAssertEqual(forged.status, 403, String(decoding: forged.body, as: UTF8.self))
        XCTAssertEqual(router.respond(to: HTTPRequest(
            method: "POST", path: "/control/kick/v1", query: ["token": "s3cret-token-123"], clientAddress: "127.0.0.1")).status, 403)
    }

    /// `/proc/PID/stat` read as proc(5) says, with a command name holding spaces and parentheses.
    func testProcessMetricsFromProcStat() throws {
        let stat = "4242 (screen (cast) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 12345 104857600 2560 "
            + "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0"
        let metrics = try XCTUnwrap(ProcessMetrics.parse(
            stat: stat, bootTimeSeconds: 1_700_000_000, ticksPerSecond: 100, pageBytes: 4096, openDescriptors: 12, maxDescriptors: 1024))
        XCTAssertEqual(metrics.cpuSeconds, 3.0, accuracy: 1e-9, "(250 + 50) ticks at 100 a second")
        XCTAssertEqual(metrics.startTimeSeconds, 1_700_000_123.45, accuracy: 1e-6)
        XCTAssertEqual(metrics.virtualBytes, 104_857_600)
        XCTAssertEqual(metrics.residentBytes, 2560 * 4096)
        XCTAssertNil(ProcessMetrics.parse(stat: "4242 (x) S 1 2", bootTimeSeconds: 0, ticksPerSecond: 100, pageBytes: 4096, openDescriptors: 0, maxDescriptors: 0))
        XCTAssertEqual(ProcessMetrics.bootTimeSeconds(procStat: "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n"), 1_700_000_000)
        let live = try XCTUnwrap(ProcessMetrics.current())
        XCTAssertGreaterThan(live.residentBytes, 1_000_000)
        XCTAssertGreaterThan(live.openDescriptors, 2)
        XCTAssertLessThan(abs(live.startTimeSeconds - Date().timeIntervalSince1970), 3600)
    }
}
