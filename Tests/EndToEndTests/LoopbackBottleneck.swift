import Foundation
import TestSupport
import XCTest

/// A bottleneck on `lo` inside a test's own loopback-only namespace (tc HTB + TBF, `../shared/notes/congestion.md`):
/// class 1:10 is the bottleneck, 1:20 (10 Gbit/s) the default for everything else; filters steer flows into it.
struct LoopbackBottleneck {
    static let tc = URL(fileURLWithPath: "/usr/sbin/tc")

    /// Runs one `tc` command (words split on spaces), failing the test with tc's stderr when it fails.
    static func run(_ words: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try ProcessRunner.run(tc, words.split(separator: " ").map(String.init), timeout: 10)
        XCTAssertEqual(result.status, 0, "tc \(words): \(result.stderr)", file: file, line: line)
    }

    /// Sets up the root HTB with a `rate` bottleneck (tc's units: `300kbit`, `1mbit`) and a TBF of `burst`
    /// (`15kb`) and 100 ms latency under it. Nothing goes through it until a filter says so.
    init(rate: String, burst: String = "15kb") throws {
        try Self.run("qdisc add dev lo root handle 1: htb default 20")
        try Self.run("class add dev lo parent 1: classid 1:10 htb rate \(rate) ceil \(rate)")
        try Self.run("class add dev lo parent 1: classid 1:20 htb rate 10gbit")
        try Self.run("qdisc add dev lo parent 1:10 handle 10: tbf rate \(rate) burst \(burst) latency 100ms")
    }

    /// Steers everything the call sends over UDP from its ICE ports (40960–41023) into the bottleneck — media,
    /// RTCP, DTLS and STUN alike, as a real bottleneck does — so the viewer's feedback and HTTP stay fast.
    /// (Until 2026-12-05 STUN was kept out: libnice's consent then failed a pair whose checks went unanswered
    /// for 10 s and never sent on it again, and two checks tail-dropped behind our media at 300 kbit/s ended
    /// the viewer in 2 of 17 runs. Consent is now the call's own, renewed by the viewer's SRTCP.)
    func shapeCallMedia() throws {
        try Self.run("filter add dev lo parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip sport 40960 0xffc0 flowid 1:10")
    }

    /// A new rate (and burst) for the bottleneck, from now on.
    func change(rate: String, burst: String = "15kb") throws {
        try Self.run("class change dev lo parent 1: classid 1:10 htb rate \(rate) ceil \(rate)")
        try Self.run("qdisc change dev lo parent 1:10 handle 10: tbf rate \(rate) burst \(burst) latency 100ms")
    }

    /// Removes the root qdisc (and with it every class and filter).
    func remove() { _ = try? ProcessRunner.run(Self.tc, ["qdisc", "del", "dev", "lo", "root"], timeout: 10) }
}
