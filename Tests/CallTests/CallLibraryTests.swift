import Call
import Foundation
import Glibc
import ScreencastSupport
import Signaling
import Synchronization
import TestSupport
import VideoSource
import XCTest

/// The ``Call`` type in-process: a test-pattern call on loopback (port 0, no agent socket), its `/stats`, a real
/// WHEP viewer (`screencast-bench viewers`), outputs added and removed while it runs, a failing output beside
/// working ones, key rotation, and a clean stop. Real encoders, sockets and files; no stubs.
final class CallLibraryTests: CallTestCase {
    /// Log lines of the call under test.
    private final class Lines: Sendable {
        let all = Mutex<[String]>([])
    }
    private let lines = Lines()
    private var logText: String { lines.all.withLock { $0.joined(separator: "\n") } }

    private func logger() -> Logger {
        Logger(component: "call", threshold: .info, output: LogOutput { [lines] line in lines.all.withLock { $0.append(line) } })
    }

    /// A small test pattern (320x180 at 15 fps: cheap on 2 cores), no agent socket, no HTTP server unless `http`.
    private func configuration(http: Bool = false) -> CallConfiguration {
        let pattern = TestPatternSettings(width: 320, height: 180, framesPerSecond: 15)
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(pattern), maxFramesPerSecond: 15))
        configuration.http = http ? HTTPEndpoint(host: "127.0.0.1", port: 0) : nil
        configuration.statsIntervalSeconds = 0
        configuration.ice.localAddresses = ["127.0.0.1"]
        return configuration
    }

    /// Frames the source has encoded so far.
    private func encoded(_ call: Call) -> Int {
        guard let json = try? JSONSerialization.jsonObject(with: Data(call.statsJSON.serialized.utf8)) as? [String: Any] else { return -1 }
        return number(json, "frames", "encoded") ?? -1
    }

    /// Waits up to `seconds` for `condition`.
    private func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    private func get(_ url: String) throws -> ProcessResult {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-f", "--max-time", "5", url], timeout: 10)
    }

    /// Started on port 0, the call serves /stats (the same JSON as ``Call/statsJSON``), takes a real viewer over
    /// WHEP, ICE and DTLS on loopback, and stops in order: the port is closed after, the outcome is complete.
    func testACallServesStatsAndAViewerThenStopsCleanly() throws {
        let call = try Call(configuration: configuration(http: true), logger: logger(), announce: { _ in })
        try call.start()
        XCTAssertThrowsError(try call.start()) { XCTAssertEqual("\($0)", "the call has already started") }
        let base = try XCTUnwrap(call.serverBaseURL)
        XCTAssertEqual(call.viewerURL, base + "/")
        XCTAssertTrue(eventually { self.encoded(call) > 0 }, "no frame encoded:\n\(logText)")

        let stats = try get(base + "/stats")
        XCTAssertEqual(stats.status, 0, stats.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(json["source"] as? String, "testpattern")
        XCTAssertEqual(json["viewerURL"] as? String, base + "/")
        XCTAssertEqual(number(json, "maxViewers"), 16)
        XCTAssertEqual(number(json, "width"), 320)
        XCTAssertEqual((json["e2ee"] as? [String: Any])?["enabled"] as? Bool, false)
        XCTAssertNil(json["sfu"], "no SFU leg configured")
        XCTAssertEqual(number(json, "viewers", "count"), 0)
        let text = try get(base + "/stats?format=text")
        XCTAssertTrue(text.stdout.contains("source: testpattern 320x180"), text.stdout)

        let viewer = try ProcessRunner.run(
            TestPaths.executable("screencast-bench"), ["viewers", "--url", base + "/whep", "--count", "1", "--seconds", "2"], timeout: 40)
        XCTAssertEqual(viewer.status, 0, "the viewer did not connect: \(viewer.stderr)\n\(logText)")
        XCTAssertTrue(viewer.stdout.hasPrefix("{\"connected\":1,"), viewer.stdout)

        let outcome = call.stop(reason: "test over")
        XCTAssertTrue(outcome.isComplete)
        XCTAssertTrue(logText.contains("info call stopping reason=\"test over\""), logText)
        XCTAssertTrue(logText.contains("info stats final "), logText)
        XCTAssertNotEqual(try get(base + "/stats").status, 0, "the server still answers after stop")
        XCTAssertTrue(call.stop().isComplete, "stop is idempotent")
        XCTAssertEqual(call.waitForStopRequest(seconds: 0), "test over")
    }

    /// Recorders added to a running call get its frames from then on; one on a full disk fails alone (the
    /// encoder and the other recording go on), its removal or the call's end reports it incomplete.
    func testOutputsComeAndGoWhileRunningAndAFailingOneStopsNoOther() throws {
        let call = try Call(configuration: configuration(), logger: logger())
        try call.start()
        defer { call.stop() }
        XCTAssertEqual(call.outputList.map { $0.output.name }, ["viewers"])
        XCTAssertTrue(eventually { self.encoded(call) > 0 })

        let full = try RecorderOutput(path: "/dev/full", logger: logger())
        let fullID = try call.add(full)
        let good = try RecorderOutput(path: folder.path("good.ivf"), logger: logger())
        let goodID = try call.add(good)
        XCTAssertEqual(call.outputList.map { $0.output.name }, ["viewers", "ivf", "ivf"])
        XCTAssertTrue(eventually { full.recorder.failure != nil }, "the write to /dev/full did not fail")
        let atFailure = encoded(call)
        XCTAssertTrue(eventually { good.recorder.framesWritten >= 10 && self.encoded(call) >= atFailure + 10 },
                      "the failing recorder stopped the others: \(good.recorder.framesWritten) frames\n\(logText)")

        // The working one, removed: its file is closed whole and stops growing; the call goes on.
        guard case .success? = call.remove(goodID) else { return XCTFail("the good recording was not complete") }
        let written = good.recorder.framesWritten
        let header = try Data(contentsOf: URL(fileURLWithPath: folder.path("good.ivf"))).prefix(4)
        XCTAssertEqual(String(decoding: header, as: UTF8.self), "DKIF")
        let afterRemoval = encoded(call)
        XCTAssertTrue(eventually { self.encoded(call) >= afterRemoval + 5 })
        XCTAssertEqual(good.recorder.framesWritten, written, "a removed output gets no frames")
        XCTAssertNil(call.remove(goodID), "removed once")
        XCTAssertEqual(call.outputList.map { $0.id }, [call.outputList[0].id, fullID])

        // The failing one stays to the end, which reports it.
        let outcome = call.stop(reason: "test over")
        XCTAssertEqual(outcome.incomplete.map { $0.output }, ["ivf"])
        XCTAssertTrue(logText.contains("error call the recording is incomplete path=/dev/full"), logText)
        XCTAssertThrowsError(try call.add(RecorderOutput(path: folder.path("late.ivf"), logger: logger())), "a stopped call takes no output")
    }

    /// With end-to-end encryption, ``Call/rotateKey()`` reads the key file again and moves to the next key index
    /// at the next keyframe, the sound's key with it; a key file that became readable by others is refused and
    /// the key stays.
    func testKeyRotationReadsTheKeyFileAgain() throws {
        let keyFile = folder.path("key")
        func writeKey(_ text: String, mode: mode_t = 0o600) {
            XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data((text + "\n").utf8)))
            XCTAssertEqual(chmod(keyFile, mode), 0)
        }
        writeKey("first passphrase")
        var configuration = configuration()
        configuration.e2ee = E2EESettings(passphrase: "first passphrase", keyFile: keyFile, keyIndex: 3)
        let call = try Call(configuration: configuration, logger: logger())
        try call.start()
        defer { call.stop() }
        XCTAssertTrue(call.encrypts)
        func e2ee() -> [String: Any] {
            let json = try? JSONSerialization.jsonObject(with: Data(call.statsJSON.serialized.utf8)) as? [String: Any]
            return json?["e2ee"] as? [String: Any] ?? [:]
        }
        XCTAssertEqual(number(e2ee(), "keyIndex"), 3)
        XCTAssertTrue(logText.contains("info call end-to-end encryption on key.index=3 salt=default"), logText)

        writeKey("second passphrase")
        XCTAssertEqual(try call.rotateKey(), 4)
        XCTAssertTrue(eventually { number(e2ee(), "keyIndex") == 4 && number(e2ee(), "rotations") == 1 }, "\(e2ee())\n\(logText)")
        XCTAssertTrue(logText.contains("e2ee key rotated key.index=4"), logText)
        // The sound's packets follow: under key index 4 once the pictures are (issue 28).
        XCTAssertTrue(eventually {
            let audio = e2ee()["audio"] as? [String: Any] ?? [:]
            return number(audio, "keyIndex") == 4 && audio["pendingKeyIndex"] is NSNull && (number(audio, "framesEncrypted") ?? 0) > 0
        }, "\(e2ee())")

        writeKey("third passphrase", mode: 0o644)
        XCTAssertThrowsError(try call.rotateKey()) { error in
            XCTAssertTrue("\(error)".contains("has mode 0644"), "\(error)")
        }
        XCTAssertEqual(number(e2ee(), "keyIndex"), 4, "a refused file keeps the key")
        XCTAssertGreaterThan(number(e2ee(), "framesEncrypted") ?? 0, 0)

        let clear = try Call(configuration: self.configuration(), logger: logger())
        XCTAssertFalse(clear.encrypts)
        XCTAssertThrowsError(try clear.rotateKey()) { XCTAssertEqual("\($0)", "the call does not encrypt: no key to rotate") }
    }
}

/// The `--share` banner says where its links work: beyond this machine, or on this machine only (no address
/// besides loopback, or the page bound to loopback, where it said "beyond this machine").
final class ShareBannerTextTests: XCTestCase {
    func testTheBannerSaysWhereTheLinksWork() {
        let lan = ShareLinks.banner(scheme: "https", hosts: ["192.0.2.7"], port: 8443, token: "t", fingerprint: nil)
        XCTAssertTrue(lan.contains("Sharing beyond this machine. Viewer link (anyone with a link can watch):\n    https://192.0.2.7:8443/?token=t\n"), lan)
        let none = ShareLinks.banner(scheme: "https", hosts: [], port: 8443, token: "t", fingerprint: nil)
        XCTAssertTrue(none.contains("Sharing on this machine only (no address besides loopback). Viewer link:\n    https://127.0.0.1:8443/?token=t\n"), none)
        let bound = ShareLinks.banner(scheme: "https", hosts: ["127.0.0.5"], port: 8443, token: "t", fingerprint: nil)
        XCTAssertTrue(bound.contains("Sharing on this machine only (the page is bound to loopback). Viewer link:\n    https://127.0.0.5:8443/?token=t\n"), bound)
        XCTAssertFalse(bound.contains("beyond"))
        let kept = ShareLinks.banner(scheme: "https", hosts: ["192.0.2.7"], port: 8443, token: "t", fingerprint: "AB:CD", certificateKept: true)
        XCTAssertTrue(kept.contains("HTTPS certificate (self-signed, kept from the last run) SHA-256:\n    AB:CD\n"), kept)
        XCTAssertFalse(kept.contains("made now"))
        let made = ShareLinks.banner(scheme: "https", hosts: ["192.0.2.7"], port: 8443, token: "t", fingerprint: "AB:CD")
        XCTAssertTrue(made.contains("(self-signed, made now)"), made)
    }
}

/// A kept `--share` key that is encrypted is refused at once (no pass-phrase prompt on the terminal, which hung
/// the start and ignored SIGINT in a bad-input trial): a new certificate is made and logged.
final class ShareStateKeyTests: XCTestCase {
    func testAnEncryptedKeptKeyIsReplacedWithoutAPrompt() throws {
        let folder = try TemporaryDirectory(prefix: "sc-sharekey")
        defer { folder.remove() }
        let state = folder.path("screencast")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-days", "30", "-subj", "/CN=x",
            "-keyout", state + "/share-key.pem", "-out", state + "/share-certificate.pem", "-passout", "pass:secret",
        ], timeout: 30)
        XCTAssertEqual(made.status, 0, made.stderr)
        for name in ["share-key.pem", "share-certificate.pem"] { XCTAssertEqual(chmod(state + "/" + name, 0o600), 0) }
        let lines = Mutex<[String]>([])
        let logger = Logger(component: "test", threshold: .info, output: LogOutput { line in lines.withLock { $0.append(line) } })
        let started = Date()
        let (identity, kept) = try ShareState(folder: state).identity(logger: logger)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertFalse(kept)
        XCTAssertTrue(identity.privateKeyPEM.contains("BEGIN PRIVATE KEY"))
        XCTAssertTrue(lines.withLock { $0 }.contains { $0.contains("kept share certificate unusable: making a new one") }, "\(lines.withLock { $0 })")
    }
}

/// What `--share` keeps is read only from a folder and files of this user alone, and a weak token is replaced.
final class ShareStateRulesTests: XCTestCase {
    private final class Lines: Sendable {
        let all = Mutex<[String]>([])
        var logger: Logger { Logger(component: "test", threshold: .info, output: LogOutput { [self] line in all.withLock { $0.append(line) } }) }
    }

    func testAFolderOthersMayWriteIsNeitherReadNorWritten() throws {
        let folder = try TemporaryDirectory(prefix: "sc-sharestate")
        defer { folder.remove() }
        let state = folder.path("screencast")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(state, 0o777), 0)
        let planted = "attacker-chose-this-token-0123456789"
        XCTAssertTrue(FileManager.default.createFile(atPath: state + "/share-token", contents: Data((planted + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let lines = Lines()
        let (token, kept) = ShareState(folder: state).token(fresh: false, logger: lines.logger)
        XCTAssertFalse(kept)
        XCTAssertNotEqual(token, planted)
        XCTAssertEqual(try String(contentsOfFile: state + "/share-token", encoding: .utf8), planted + "\n", "nothing written there either")
        XCTAssertTrue(lines.all.withLock { $0 }.contains { $0.contains("share state folder not private") }, "\(lines.all.withLock { $0 })")
    }

    func testAWeakOrHugeTokenIsReplaced() throws {
        XCTAssertTrue(ShareState.isStrongToken(ShareLinks.freshToken()))
        XCTAssertFalse((0..<2000).contains { _ in ShareLinks.freshToken().hasPrefix("-") }, "never read as an option (1 in 64 was)")
        XCTAssertFalse(ShareState.isStrongToken("a"))
        XCTAssertFalse(ShareState.isStrongToken(String(repeating: "a", count: 40_000)))
        XCTAssertFalse(ShareState.isStrongToken("0123456789abcdef\u{FFFD}"))
        XCTAssertFalse(ShareState.isStrongToken("0123456789abcdef/"))
        XCTAssertTrue(ShareState.isStrongToken("0123456789abcdef"))
        let folder = try TemporaryDirectory(prefix: "sc-sharestate")
        defer { folder.remove() }
        let state = folder.path("screencast")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        XCTAssertTrue(FileManager.default.createFile(atPath: state + "/share-token", contents: Data("a\n".utf8), attributes: [.posixPermissions: 0o600]))
        let (token, kept) = ShareState(folder: state).token(fresh: false, logger: Lines().logger)
        XCTAssertFalse(kept)
        XCTAssertEqual(token.count, 32)
        XCTAssertEqual(try String(contentsOfFile: state + "/share-token", encoding: .utf8), token + "\n", "the new one is kept")
    }
}
