import Foundation
import Glibc
import ScreencastSupport
import Signaling
import Synchronization
import TestSupport
import SDP
import Sharing
import XCTest

/// Headless Chromium (Debian `chromium`) loads the viewer page from the real server: the page's script
/// runs (no syntax errors: the body's marker is set), takes the token from `?token=`, POSTs a recvonly
/// VP8 offer with it, and applies the (real, builder-made) answer, after which Chromium sends ICE checks
/// to the answer's candidate.
///
/// Everything runs in a loopback-only network namespace of its own: the test re-runs itself under
/// `unshare -n` (root needed), so neither the server nor Chromium can reach any other address.
final class ChromiumViewerTests: XCTestCase {
    static let chromium = "/usr/lib/chromium/chromium"
    static let insideVariable = "SIGNALING_TEST_INSIDE_NETNS"

    func testViewerPageRunsInChromium() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else { throw XCTSkip("chromium is not installed") }
        if ProcessInfo.processInfo.environment[Self.insideVariable] == nil {
            guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
                throw XCTSkip("needs root and unshare for a loopback-only network namespace")
            }
            let testBinary = CommandLine.arguments[0]
            let result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/unshare"),
                ["-n", "sh", "-c", "ip link set lo up && \(Self.insideVariable)=1 exec \"$0\" \"$1\"", testBinary,
                 "SignalingTests.ChromiumViewerTests/testViewerPageRunsInChromium"],
                timeout: 90)
            XCTAssertFalse(result.timedOut)
            XCTAssertEqual(result.status, 0, "inner run:\n\(result.stdout)\n\(result.stderr)")
            XCTAssertTrue(result.stdout.contains("Executed 1 test, with 0 failures"), result.stdout)
            return
        }
        try runInsideNamespace()
    }

    private func runInsideNamespace() throws {
        let stun = try UDPListener()
        let sessions = AnsweringSessions(candidatePort: stun.port)
        let server = try SignalingServer(
            configuration: SignalingConfiguration(endpoint: HTTPEndpoint(host: "127.0.0.1", port: 0), token: BearerToken("page-token")),
            sessions: sessions, stats: { nil }, logger: Logger(component: "test", threshold: .warning))
        defer { server.stop() }

        let home = FileManager.default.temporaryDirectory.appendingPathComponent("signaling-chromium-\(getpid())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        setenv("HOME", home.path, 1)
        setenv("TMPDIR", home.path, 1)
        let flags = [
            "--headless=new", "--no-sandbox", "--allow-loopback-in-peer-connection", "--disable-features=WebRtcHideLocalIpsWithMdns",
            "--log-level=3", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        ]
        let url = server.viewerURL(token: "page-token")

        // 1. The script runs to its end: --dump-dom shows the marker it sets last.
        let dump = try ProcessRunner.run(
            URL(fileURLWithPath: Self.chromium),
            flags + ["--user-data-dir=\(home.path)/dump", "--virtual-time-budget=3000", "--dump-dom", url], timeout: 60)
        XCTAssertFalse(dump.timedOut)
        XCTAssertTrue(dump.stdout.contains("data-viewer=\"ready\""), "marker missing:\n\(dump.stdout.prefix(3000))\n\(dump.stderr.suffix(2000))")
        XCTAssertTrue(dump.stdout.contains("id=\"status\" data-state="), dump.stdout)

        // 2. The page POSTs a recvonly VP8 offer with the token; the first is refused (503), so it retries
        //    after its back-off, then applies the answer: Chromium sends ICE connectivity checks to the
        //    answer's candidate (our UDP socket), USERNAME "test:…".
        sessions.reset(refuseNext: true)
        stun.drain()  // checks the first run's browser sent before it exited
        let browser = try ProcessRunner.start(URL(fileURLWithPath: Self.chromium), flags + ["--user-data-dir=\(home.path)/live", url])
        defer {
            if browser.isRunning { browser.terminate() }
            ProcessRunner.wait(for: browser, timeout: 10)
        }
        let username = stun.waitForBindingRequest(timeout: 20) { username in
            sessions.answeredUfrags.contains { username == "test:" + $0 }
        }
        XCTAssertNotNil(username, "no ICE check for an answered offer arrived, so the answer was not applied")
        let offers = sessions.offers
        print("chromium: \(offers.count) offer(s), ICE check USERNAME \(username ?? "none")")
        XCTAssertFalse(offers.isEmpty, "the page POSTed an offer with the token")
        if let offer = offers.first {
            XCTAssertTrue(offer.contains("m=video"), offer)
            XCTAssertTrue(offer.contains("a=recvonly"), offer)
            XCTAssertTrue(offer.contains("VP8/90000"), offer)
        }
        XCTAssertGreaterThanOrEqual(offers.count, 2, "after the 503 the page retried (back-off 0.5 s)")
        XCTAssertEqual(sessions.answered, offers.count - 1, "every offer after the first was answerable")
    }
}

/// A UDP socket on 127.0.0.1 that waits for a STUN Binding Request (RFC 8489 §5, §14.3 USERNAME).
private final class UDPListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound else { throw RawHTTPError.socket("udp bind: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        var tv = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Discards every datagram already queued.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 1500)
        while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) >= 0 {}
    }

    /// The USERNAME of the first Binding Request within `timeout` seconds that `accept`s it, or nil.
    func waitForBindingRequest(timeout: Double, accept: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 1500)
        while Date() < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count >= 20, buffer[0] == 0x00, buffer[1] == 0x01, buffer[4...7].elementsEqual([0x21, 0x12, 0xA4, 0x42]) else { continue }
            var offset = 20
            while offset + 4 <= count {
                let type = Int(buffer[offset]) << 8 | Int(buffer[offset + 1])
                let length = Int(buffer[offset + 2]) << 8 | Int(buffer[offset + 3])
                guard offset + 4 + length <= count else { break }
                if type == 0x0006 {
                    let username = String(decoding: buffer[(offset + 4)..<(offset + 4 + length)], as: UTF8.self)
                    if accept(username) { return username }
                    break
                }
                offset += 4 + (length + 3) / 4 * 4
            }
        }
        return nil
    }
}

/// Answers offers with the real VideoAnswerBuilder (a made-up fingerprint; one host candidate, the
/// test's UDP listener, which never answers, so ICE never completes), recording what arrived.
private final class AnsweringSessions: WHEPSessionProvider {
    let candidatePort: UInt16
    init(candidatePort: UInt16) { self.candidatePort = candidatePort }
    private let state = Mutex<(offers: [String], answeredUfrags: [String], refuseNext: Bool)>(([], [], false))

    /// Forgets what arrived; the next offer is refused with 503 when `refuseNext`.
    func reset(refuseNext: Bool) { state.withLock { $0 = ([], [], refuseNext) } }
    /// The `a=ice-ufrag` of every offer answered since the last reset.
    var answeredUfrags: [String] { state.withLock { $0.answeredUfrags } }
    var offers: [String] { state.withLock { $0.offers } }
    var answered: Int { state.withLock { $0.answeredUfrags.count } }

    func createSession(offer: String) throws(SignalingError) -> WHEPSession {
        let refuse = state.withLock { state -> Bool in
            state.offers.append(offer)
            defer { state.refuseNext = false }
            return state.refuseNext
        }
        if refuse { throw .unavailable("offer refused to exercise the page's retry") }
        do {
            let parsed = try SDPParser().parse(offer)
            let local = LocalMediaParameters(
                iceUfrag: "test", icePwd: "0123456789abcdefghijkl", fingerprint: Fingerprint(algorithm: "sha-256", digest: Array(0..<32)),
                candidates: [try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 \(candidatePort) typ host")],
                videoSSRC: 1111, rtxSSRC: 2222, cname: "test", sessionID: 42)
            let (answer, _) = try VideoAnswerBuilder.answer(parsed, local: local)
            let ufrag = parsed.media.first?.iceUfrag ?? ""
            state.withLock { $0.answeredUfrags.append(ufrag) }
            return WHEPSession(id: WHEPSessionID.random(), answer: answer.serialized())
        } catch {
            throw SignalingError(error)
        }
    }

    func updateSession(id: String, fragment: String) throws(SignalingError) -> String? { nil }
    func deleteSession(id: String) -> Bool { true }
}
