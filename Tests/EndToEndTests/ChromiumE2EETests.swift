import Foundation
import Glibc
import TestSupport
import XCTest

/// Headless Chromium on the viewer page of a call that encrypts end to end (`--e2ee-key-file`), in a
/// loopback-only network namespace: with the key the page decrypts in its Worker and shows the test pattern;
/// without it, or with a wrong one, no frame is decoded and the page says so; SIGHUP rotates the key at a
/// keyframe without a frame lost. The sound is encrypted too: the page with the key plays it, without it
/// nothing of it decodes.
final class ChromiumE2EETests: XCTestCase {
    private let (width, height) = (640, 360)
    private let passphrase = "correct horse + battery/é"
    private let nextPassphrase = "the next passphrase, after SIGHUP"
    private let thirdPassphrase = "a third one the page is not told"
    private let tools = [URL(fileURLWithPath: "/usr/lib/chromium/chromium"), EndToEnd.systemPython, TestPaths.executable("screencast-call")]

    /// A call with a key file (mode 0600) in a folder of its own, and the Chromium profile folder.
    private func startCall(_ more: [String] = []) throws -> (call: CallUnderTest, keyFile: String, profile: String, keys: TemporaryDirectory) {
        let keys = try TemporaryDirectory(prefix: "sc-e2ee")
        let keyFile = keys.path("key")
        XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data((passphrase + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "\(width)x\(height)", "--e2ee-key-file", keyFile] + more)
        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        return (call, keyFile, profile, keys)
    }

    /// Runs chromium_e2ee.py with `steps` and returns its snapshots.
    private func browse(
        _ call: CallUnderTest, profile: String, query: String = "", fragment: String = "", sound: Bool = false, steps: [[String: Any]]
    ) throws -> [[String: Any]] {
        let points = barSamplePoints(width: width, height: height).map { "\($0.x),\($0.y)" }.joined(separator: ";")
        let stepsJSON = String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)
        let report = try EndToEnd.runPeer(
            EndToEnd.systemPython, "chromium_e2ee.py",
            ["--url", call.baseURL + "/" + query + fragment, "--profile", profile + "/profile", "--steps", stepsJSON,
             "--points", points, "--timeout", "60"] + (sound ? ["--sound"] : []),
            timeout: 120, environment: ["HOME": profile, "TMPDIR": profile])
        print("e2e: chromium e2ee \(report)")
        XCTAssertNil(report["error"] as? String, "\(report)")
        return report["snapshots"] as? [[String: Any]] ?? []
    }

    private func fragment(_ key: String) -> String { "#key=" + key.utf8.map { String(format: "%%%02X", $0) }.joined() }

    /// The worker's counts as the page held them at the snapshot (`viewer.e2ee.counts`, posted every 500 ms),
    /// with the page's `mode` and `state`. Not the copy in the page's `stats`: that one is refreshed with
    /// `getStats` once a second, so two snapshots taken a second apart can hold samples from either side of an
    /// event (a rehearsal compared a `stats` copy from before a key change with a live one after it and saw
    /// "15 frames decrypted without the key" that had been decrypted before the change).
    private func e2ee(_ snapshot: [String: Any]) -> [String: Any] {
        let view = snapshot["e2ee"] as? [String: Any] ?? [:]
        var counts = view["counts"] as? [String: Any] ?? [:]
        for key in ["mode", "state"] { counts[key] = view[key] }
        return counts
    }

    /// Pixels of a snapshot against the test pattern's bars (what the screen shows), BT.601 limited range.
    private func assertBars(_ snapshot: [String: Any], file: StaticString = #filePath, line: UInt = #line) {
        guard let pixels = snapshot["pixels"] as? [[Int]], pixels.count == 8 else {
            return XCTFail("no pixels: \(snapshot)", file: file, line: line)
        }
        for (index, pixel) in pixels.enumerated() {
            let expected = rgb(ofBar: testPatternBars[index])
            let difference = [abs(pixel[0] - expected.r), abs(pixel[1] - expected.g), abs(pixel[2] - expected.b)].max() ?? 255
            XCTAssertLessThanOrEqual(difference, 12, "bar \(index): \(pixel) vs \(expected)", file: file, line: line)
        }
    }

    /// The key in the fragment: frames decrypt and show the pattern, the overlay has the lock (an inline SVG
    /// that paints its green in a screenshot: Debian's Chromium has no emoji font, and U+1F512 showed as an
    /// empty box). The pointer never moves, so after 3 s the overlay has faded out; moved onto the lock, it
    /// is back at once. Then the
    /// page learns the next passphrase (the link with the new #key=), the key file changes and SIGHUP goes
    /// to the call: the frames under key index 1 start at a keyframe and the page goes on decoding without
    /// one failed frame. A third rotation to a passphrase the page lacks: it decodes nothing more and says
    /// the key changed; typed in, it goes on from a keyframe.
    func testTheKeyInTheLinkPlaysAndSIGHUPRotatesAtAKeyframe() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumE2EETests/testTheKeyInTheLinkPlaysAndSIGHUPRotatesAtAKeyframe", timeout: 180)
        }
        guard EndToEnd.requireTools(tools) else { return }
        let (call, keyFile, profile, keys) = try startCall()
        defer { call.stop(); keys.remove() }
        let snapshots = try browse(call, profile: profile, fragment: fragment(passphrase), steps: [
            ["wait": "decoded", "more": 60], ["pixels": true],
            ["fragment": nextPassphrase], ["hold": 1],
            ["rotate": ["file": keyFile, "passphrase": nextPassphrase, "pid": Int(call.process.processIdentifier)]],
            ["wait": "decoded", "more": 60], ["pixels": true], ["pointer": "lock"],
            ["rotate": ["file": keyFile, "passphrase": thirdPassphrase, "pid": Int(call.process.processIdentifier)]],
            ["wait": "state", "state": "key-changed", "received": 30], ["hold": 1],
            ["type": thirdPassphrase], ["wait": "decoded", "more": 30], ["pixels": true],
        ])
        XCTAssertEqual(snapshots.count, 14)
        guard snapshots.count == 14 else { return }
        let first = snapshots[1]
        XCTAssertEqual(first["e2eeState"] as? String, "decrypting")
        XCTAssertEqual(first["panelVisible"] as? Bool, false)
        XCTAssertTrue((first["overlay"] as? String ?? "").hasPrefix("key 0 \u{00B7} "), "\(first["overlay"] ?? "-")")
        XCTAssertFalse((first["overlay"] as? String ?? "").unicodeScalars.contains { $0.properties.isEmojiPresentation }, "no emoji")
        let bar = first["bar"] as? [String: Any] ?? [:]
        XCTAssertEqual(bar["lockHidden"] as? Bool, false, "\(bar)")
        XCTAssertEqual(bar["lockSvg"] as? Bool, true, "\(bar)")
        XCTAssertEqual((bar["lockBox"] as? [Double])?.map { $0.rounded() }, [11, 13], "\(bar)")
        XCTAssertEqual(e2ee(first)["mode"] as? String, "script-transform")
        XCTAssertEqual((first["stats"] as? [String: Any])?["width"] as? Int, width)
        assertBars(first)

        let last = snapshots[6], counts = e2ee(last)
        XCTAssertEqual(counts["keyIndex"] as? Int, 1)
        XCTAssertEqual(counts["failed"] as? Int, 0, "no frame lost across the rotation")
        XCTAssertEqual(counts["noKey"] as? Int, 0)
        let switches = try XCTUnwrap(counts["switches"] as? [[String: Any]])
        XCTAssertEqual(switches.map { $0["keyIndex"] as? Int }, [0, 1])
        XCTAssertEqual(switches.map { $0["keyframe"] as? Bool }, [true, true], "each key starts at a keyframe")
        XCTAssertTrue((last["overlay"] as? String ?? "").hasPrefix("key 1 \u{00B7} "))
        assertBars(last)
        // The pointer has been still since the page opened (more than 3 s: 120 frames decoded since): faded.
        let still = last["bar"] as? [String: Any] ?? [:], woken = snapshots[7]
        print("e2e: overlay at \(last["elapsedMs"] ?? "-") ms \(still); after the pointer moved \(woken["bar"] ?? "-"), "
              + "back in \(woken["wokeMs"] ?? "-") ms, lock \(woken["lockPixels"] ?? "-") green pixels")
        XCTAssertEqual(still["idle"] as? Bool, true, "\(still)")
        XCTAssertEqual(still["opacity"] as? Double, 0, "the overlay no longer covers the picture: \(still)")
        let awake = woken["bar"] as? [String: Any] ?? [:]
        XCTAssertEqual(awake["idle"] as? Bool, false, "\(awake)")
        XCTAssertEqual(awake["opacity"] as? Double, 1, "\(awake)")
        XCTAssertLessThan(woken["wokeMs"] as? Int ?? .max, 1_500, "back with its 0.4-s fade, no more")
        XCTAssertGreaterThanOrEqual(woken["lockPixels"] as? Int ?? 0, 40, "the lock paints (11x13 px, mostly green)")

        let (changed, held) = (snapshots[9], snapshots[10])
        XCTAssertEqual(changed["message"] as? String, "The call changed its key \u{2014} enter the new key")
        XCTAssertEqual(held["e2eeState"] as? String, "key-changed")
        XCTAssertEqual(held["status"] as? String, "connected \u{2014} cannot decrypt: the key changed")
        XCTAssertEqual(first["status"] as? String, "live")
        // Nothing decrypted under the key the page lacks, and nothing decoded but what was decrypted before it:
        // the decoder may still finish a few frames of key 1 that were on their way when the state changed.
        let decryptedBefore = try XCTUnwrap(e2ee(changed)["decrypted"] as? Int)
        XCTAssertEqual(e2ee(held)["decrypted"] as? Int, decryptedBefore, "nothing decrypted without the key")
        XCTAssertLessThanOrEqual(try XCTUnwrap(held["framesDecoded"] as? Int), decryptedBefore, "nothing decoded without the key")
        XCTAssertGreaterThan(e2ee(held)["failed"] as? Int ?? 0, e2ee(changed)["failed"] as? Int ?? 0, "frames under key 2 kept coming and failed")
        let third = e2ee(snapshots[13])
        XCTAssertEqual(third["keyIndex"] as? Int, 2)
        XCTAssertEqual((third["switches"] as? [[String: Any]])?.last?["keyframe"] as? Bool, true, "the typed key goes on from a keyframe")
        assertBars(snapshots[13])

        let stats = try call.stats()["e2ee"] as? [String: Any] ?? [:]
        print("e2e: the call's e2ee stats \(stats)")
        XCTAssertEqual(stats["enabled"] as? Bool, true)
        XCTAssertEqual(stats["keyIndex"] as? Int, 2)
        XCTAssertEqual(stats["rotations"] as? Int, 2)
        XCTAssertGreaterThan(stats["framesEncrypted"] as? Int ?? 0, 150)
        XCTAssertEqual(stats["framesDropped"] as? Int, 0)
        XCTAssertNotNil(call.waitForLine("e2ee key rotated", timeout: 1))
        for secret in [passphrase, nextPassphrase, thirdPassphrase] {
            XCTAssertFalse(call.log.contains(secret), "the call never logs a passphrase")
        }
    }

    /// No key: frames arrive, none is decoded, the page says the screen is encrypted. A wrong key typed in:
    /// still none, and the page says the key does not match. The right one typed in: the picture appears.
    func testNoKeyThenAWrongKeyDecodeNothingAndTheRightOneRecovers() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumE2EETests/testNoKeyThenAWrongKeyDecodeNothingAndTheRightOneRecovers", timeout: 180)
        }
        guard EndToEnd.requireTools(tools) else { return }
        let (call, _, profile, keys) = try startCall()
        defer { call.stop(); keys.remove() }
        let snapshots = try browse(call, profile: profile, steps: [
            ["wait": "state", "state": "no-key", "received": 60], ["hold": 1],
            ["type": "not the passphrase"], ["wait": "state", "state": "wrong-key", "received": 60], ["hold": 1],
            ["type": passphrase], ["wait": "decoded", "more": 30], ["pixels": true],
        ])
        XCTAssertEqual(snapshots.count, 8)
        guard snapshots.count == 8 else { return }
        for (index, expected, status) in [
            (1, "This screen is end-to-end encrypted \u{2014} enter the key", "connected \u{2014} cannot decrypt: no key"),
            (4, "The key does not match \u{2014} enter the key", "connected \u{2014} cannot decrypt: wrong key"),
        ] {
            let snapshot = snapshots[index]
            // Connected, but the status line must not say "live" while nothing can be shown.
            XCTAssertEqual(snapshot["status"] as? String, status, "step \(index)")
            XCTAssertEqual(snapshot["statusState"] as? String, "connected", "step \(index)")
            XCTAssertEqual(snapshot["statusBlocked"] as? String, "yes", "step \(index)")
            XCTAssertEqual(snapshot["framesDecoded"] as? Int, 0, "step \(index): not one frame decoded")
            XCTAssertEqual(snapshot["message"] as? String, expected)
            XCTAssertEqual(snapshot["panelVisible"] as? Bool, true)
            XCTAssertTrue((snapshot["panelGlyph"] as? String ?? "").hasPrefix(#"url("data:image/svg+xml,"#), "the panel's lock: \(snapshot["panelGlyph"] ?? "-")")
            XCTAssertGreaterThanOrEqual(e2ee(snapshot)["received"] as? Int ?? 0, 60, "frames arrive all the same")
            XCTAssertEqual(e2ee(snapshot)["decrypted"] as? Int, 0)
            XCTAssertFalse((snapshot["overlay"] as? String ?? "").contains("key "), "step \(index)")
            XCTAssertEqual((snapshot["bar"] as? [String: Any])?["lockHidden"] as? Bool, true, "no lock without a working key")
        }
        let refused = e2ee(snapshots[4])
        XCTAssertGreaterThan(refused["failed"] as? Int ?? 0, 0)
        XCTAssertEqual((refused["failed"] as? Int ?? 0) + (refused["noKey"] as? Int ?? 0), refused["received"] as? Int,
                       "every frame refused: no key yet, then the wrong key")
        let last = snapshots[7], counts = e2ee(last)
        let waited = (snapshots[6]["elapsedMs"] as? Int ?? 0) - (snapshots[5]["elapsedMs"] as? Int ?? 0)
        print("e2e: decoding \(waited) ms after the right key was typed; worker keyframe requests \(counts["keyframeRequests"] ?? "-"), "
              + "delta frames held back \(counts["heldBack"] ?? "-")")
        // The page tells the call it can decode now (POST on its WHEP session): a keyframe at once. Without that
        // hint its keyframe requests, spaced to 16 s while it could not decode, made it wait 17 s (measured).
        XCTAssertLessThan(waited, 6000, "decoding soon after the right key")
        let switches = try XCTUnwrap(counts["switches"] as? [[String: Any]])
        XCTAssertEqual(switches.first?["keyframe"] as? Bool, true, "the decoder starts at a keyframe")
        XCTAssertEqual(last["e2eeState"] as? String, "decrypting")
        XCTAssertEqual(last["panelVisible"] as? Bool, false)
        XCTAssertEqual(last["status"] as? String, "live", "the right key: live again")
        XCTAssertEqual(last["statusBlocked"] as? String, "no")
        assertBars(last)
    }

    /// A viewer without the key cannot decode anything and keeps asking for keyframes (Chromium on every failed
    /// frame, the page's worker too). Every viewer pays for a keyframe of the shared encoder: before issue 34 a
    /// keyless page beside a keyed viewer made the encoder send one about every second (`keyframes` +5 every 5 s,
    /// 140 → 410 kbit/s for everyone). Now each viewer's requests are spaced 1 → 4 → 16 s while keyframes do
    /// not help it (``ViewerKeyframeGate``): over the keyless page's 15 s, beside a light viewer that stands for
    /// the keyed audience, the encoder makes at most 4 keyframes (its join, then 1, 5 and 21 s later).
    func testAKeylessViewerDoesNotMakeEveryoneReceiveKeyframes() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumE2EETests/testAKeylessViewerDoesNotMakeEveryoneReceiveKeyframes", timeout: 180)
        }
        guard EndToEnd.requireTools(tools + [TestPaths.executable("screencast-bench")]) else { return }
        let (call, _, profile, keys) = try startCall()
        defer { call.stop(); keys.remove() }
        let light = try ProcessRunner.start(
            TestPaths.executable("screencast-bench"), ["viewers", "--url", call.whepURL, "--count", "1", "--seconds", "40"], stdout: Pipe(), stderr: Pipe())
        defer { _ = ProcessRunner.terminate(light) }
        func counts() throws -> (keyframes: Int, encoded: Int, held: Int) {
            let stats = try call.stats()
            let frames = stats["frames"] as? [String: Any] ?? [:], viewers = stats["viewers"] as? [String: Any] ?? [:]
            return (frames["keyframes"] as? Int ?? -1, frames["encoded"] as? Int ?? -1, viewers["keyframeRequestsHeld"] as? Int ?? -1)
        }
        let joined = Date().addingTimeInterval(10)
        while (try? call.viewers()["connected"] as? Int) != 1, Date() < joined { usleep(100_000) }
        sleep(2)
        let before = try counts()
        let started = Date()
        let snapshots = try browse(call, profile: profile, steps: [["wait": "state", "state": "no-key", "received": 30], ["hold": 12]])
        let watched = Date().timeIntervalSince(started)
        let after = try counts()
        XCTAssertEqual(snapshots.count, 2)
        XCTAssertEqual(snapshots.last?["framesDecoded"] as? Int, 0, "the keyless page decoded nothing")
        let keyframes = after.keyframes - before.keyframes
        print("e2e: keyless page for \(String(format: "%.1f", watched)) s: \(keyframes) keyframes of \(after.encoded - before.encoded) frames, "
              + "\(after.held - before.held) keyframe requests held")
        XCTAssertGreaterThanOrEqual(keyframes, 1, "its join's keyframe")
        XCTAssertLessThanOrEqual(keyframes, 4, "not one a second for everyone")
        XCTAssertGreaterThanOrEqual(after.held - before.held, 5, "it kept asking and was held")
        XCTAssertTrue(ProcessRunner.isRunning(light), "the light viewer watched throughout")
    }

    /// The sound is end-to-end encrypted (Opus, its TOC byte clear) under the video's key. A 1000 Hz test tone,
    /// the page unmuted: without the key the worker refuses every Opus packet (no key) and nothing plays
    /// (`audioLevel` ~0); once the key is in the link, over 3 s `totalSamplesReceived` rises by at least 2 s of
    /// sound, `concealedSamples` stay under 2 % of those and the level shows the tone (> 0.05); the worker
    /// decrypted the Opus packets, none failed, and the call counts them encrypted under the video's key index.
    func testTheSoundIsEncryptedAndPlaysOnlyWithTheKey() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumE2EETests/testTheSoundIsEncryptedAndPlaysOnlyWithTheKey", timeout: 150)
        }
        guard EndToEnd.requireTools(tools + [URL(fileURLWithPath: "/usr/bin/chromedriver")]) else { return }
        let (call, _, profile, keys) = try startCall(["--audio-test-tone", "1000"])
        defer { call.stop(); keys.remove() }
        let snapshots = try browse(call, profile: profile, sound: true, steps: [
            ["wait": "state", "state": "no-key", "received": 30], ["unmute": true], ["hold": 2],
            ["fragment": passphrase], ["wait": "decoded", "more": 30], ["hold": 3],
        ])
        XCTAssertEqual(snapshots.count, 6)
        guard snapshots.count == 6 else { return }
        func audio(_ snapshot: [String: Any]) -> [String: Any] { e2ee(snapshot)["audio"] as? [String: Any] ?? [:] }
        func sound(_ snapshot: [String: Any]) -> [String: Any] { snapshot["sound"] as? [String: Any] ?? [:] }
        let keyless = snapshots[2]
        print("e2e: keyless sound \(sound(keyless)), worker \(audio(keyless))")
        XCTAssertGreaterThanOrEqual(audio(keyless)["noKey"] as? Int ?? 0, 50, "Opus packets arrive (50 a second) and are refused")
        XCTAssertEqual(audio(keyless)["decrypted"] as? Int, 0)
        XCTAssertLessThan(sound(keyless)["audioLevel"] as? Double ?? 0, 0.01, "nothing plays without the key")
        XCTAssertEqual(keyless["framesDecoded"] as? Int, 0, "nor is a picture shown")

        let (before, after) = (sound(snapshots[4]), sound(snapshots[5]))
        print("e2e: sound with the key \(before) -> \(after), worker \(audio(snapshots[5]))")
        let received = (after["totalSamplesReceived"] as? Int ?? 0) - (before["totalSamplesReceived"] as? Int ?? 0)
        let concealed = (after["concealedSamples"] as? Int ?? 0) - (before["concealedSamples"] as? Int ?? 0)
        XCTAssertGreaterThanOrEqual(received, 96_000, "at least 2 s of 48 kHz sound in 3 s")
        XCTAssertLessThan(Double(concealed), 0.02 * Double(max(received, 1)), "concealed \(concealed) of \(received)")
        let level = after["audioLevel"] as? Double ?? 0
        XCTAssertGreaterThan(level, 0.05, "the tone plays: \(after)")
        XCTAssertLessThan(level, 0.3, "\(after)")
        let worker = audio(snapshots[5])
        XCTAssertGreaterThanOrEqual(worker["decrypted"] as? Int ?? 0, 150, "3 s of 20-ms Opus packets decrypted")
        XCTAssertEqual(worker["failed"] as? Int, 0)
        XCTAssertEqual(worker["keyIndex"] as? Int, 0)
        XCTAssertEqual(e2ee(snapshots[5])["failed"] as? Int, 0, "the pictures as before")

        let stats = try call.stats()["e2ee"] as? [String: Any] ?? [:]
        let callAudio = stats["audio"] as? [String: Any] ?? [:]
        print("e2e: the call's e2ee stats \(stats)")
        XCTAssertEqual(callAudio["keyIndex"] as? Int, stats["keyIndex"] as? Int)
        XCTAssertGreaterThanOrEqual(callAudio["framesEncrypted"] as? Int ?? 0, 250, "5 s and more of Opus packets")
        XCTAssertEqual(callAudio["framesDropped"] as? Int, 0)
    }

    /// Without RTCRtpScriptTransform (forced: `?e2ee-api=encoded-streams`), the page decrypts through
    /// `createEncodedStreams()` on an `encodedInsertableStreams` peer connection.
    func testTheEncodedStreamsFallbackDecrypts() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ChromiumE2EETests/testTheEncodedStreamsFallbackDecrypts", timeout: 150)
        }
        guard EndToEnd.requireTools(tools) else { return }
        let (call, _, profile, keys) = try startCall()
        defer { call.stop(); keys.remove() }
        let snapshots = try browse(call, profile: profile, query: "?e2ee-api=encoded-streams", fragment: fragment(passphrase), steps: [
            ["wait": "decoded", "more": 60], ["pixels": true],
        ])
        guard let last = snapshots.last else { return XCTFail("no snapshot") }
        XCTAssertEqual(e2ee(last)["mode"] as? String, "encoded-streams")
        XCTAssertEqual(e2ee(last)["failed"] as? Int, 0)
        assertBars(last)
    }
}
