import FrameCrypto
import Foundation
import Media
import Publishing
import TestSupport
import XCTest

/// End-to-end encryption through a real Janus (issue 14): a call with `--e2ee-key-file` publishes into a
/// VideoRoom (``JanusHarness``); what Janus forwards is what its operator could see.
/// - aiortc subscribing through Janus without the key receives the packets, reassembles the frames, and no
///   picture it makes shows the screen;
/// - the frames it reassembled from the RTP payloads Janus carried are FrameCryptor frames: the clear VP8
///   header, then bytes that are not the encoder's (the call's `--record-ivf` has the clear frames) and do not
///   decode to the screen, then the trailer; decrypted with the key each one is, byte for byte, a frame the
///   encoder made;
/// - headless Chromium on our viewer page subscribing through Janus (`?janus=…&room=…`) with the key in the
///   link decodes frames that show the screen (the test pattern's bars); without the key it decodes none and
///   says the screen is encrypted. No viewer of the call's own WHEP endpoint is involved.
final class JanusE2EETests: XCTestCase {
    static let subscriber = TestPaths.packageRoot.appendingPathComponent("Tests/PublishingTests/Peers/janus_subscriber.py")
    static let browser = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Peers/chromium_e2ee.py")
    let room = 78
    let (width, height) = (640, 360)
    let passphrase = "the SFU never learns this"

    func testThroughJanusOnlyAPeerWithTheKeySeesTheScreen() throws {
        guard JanusHarness.isInside else {
            let tools = [JanusCallTests.python, URL(fileURLWithPath: "/usr/lib/chromium/chromium"), TestPaths.executable("screencast-call")]
            for tool in tools where !FileManager.default.isExecutableFile(atPath: tool.path) {
                return XCTFail("\(tool.path) is missing: run tools/setup and swift build")
            }
            return try JanusHarness.rerunInNamespace("PublishingTests.JanusE2EETests/testThroughJanusOnlyAPeerWithTheKeySeesTheScreen", timeout: 240)
        }
        let janus = try JanusHarness()
        defer { janus.stop() }
        try janus.start()
        let keyFile = janus.folder.appendingPathComponent("key").path
        XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data(passphrase.utf8), attributes: [.posixPermissions: 0o600]))
        let recording = janus.folder.appendingPathComponent("clear.ivf").path
        let call = try ProcessRunner.start(TestPaths.executable("screencast-call"), [
            "--source", "testpattern", "--pattern-size", "\(width)x\(height)", "--http", "127.0.0.1:18080", "--stats-interval", "0",
            "--socket", janus.folder.appendingPathComponent("agent.sock").path, "--ice-address", "127.0.0.2", "--ice-address", "127.0.0.1",
            "--janus", JanusHarness.apiURL, "--janus-room", String(room), "--janus-create-room", "--janus-display", "e2ee",
            "--e2ee-key-file", keyFile, "--e2ee-key-index", "3", "--record-ivf", recording,
        ])
        defer { _ = ProcessRunner.terminate(call) }
        let published = Date()
        while (try? JanusCallTests.stats())?["state"] as? String != "published", Date().timeIntervalSince(published) < 20 { usleep(200_000) }
        XCTAssertEqual(try JanusCallTests.stats()["state"] as? String, "published")

        // aiortc without the key, through Janus.
        let pictures = janus.folder.appendingPathComponent("pictures.yuv").path
        let result = try ProcessRunner.run(JanusCallTests.python, [
            Self.subscriber.path, "--url", JanusHarness.apiURL, "--room", String(room), "--seconds", "4", "--record-frames", "60",
            "--save-pictures", pictures,
        ], timeout: 40)
        let line = try XCTUnwrap(result.stdout.split(separator: "\n").last, "the subscriber printed nothing: \(result.stderr.suffix(3000))")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        var decoder = try XCTUnwrap(report["decoder"] as? [String: Any], "\(report)")
        let frames = (decoder.removeValue(forKey: "frames") as? [String] ?? []).map { bytes(hex: $0) }
        print("janus: aiortc without the key through Janus: \(report.filter { $0.key != "decoder" }), decoder \(decoder)")
        XCTAssertNil(report["error"] as? String)
        XCTAssertEqual(report["publisher"] as? String, "e2ee")
        XCTAssertGreaterThan(report["packetsReceived"] as? Int ?? 0, 100, "Janus forwards the packets")
        let attempts = decoder["attempts"] as? Int ?? 0
        XCTAssertGreaterThan(attempts, 60, "aiortc reassembles the frames and hands them to libvpx")
        XCTAssertGreaterThan(decoder["errors"] as? Int ?? 0, attempts / 2, "libvpx refuses most of them")
        // libvpx may make a picture of noise from a frame now and then (its clear header parses): never the screen.
        let made = try Self.pictures(at: pictures, width: width, height: height)
        XCTAssertEqual(made.count, min(30, report["frames"] as? Int ?? 0))
        for (index, picture) in made.enumerated() {
            XCTAssertLessThanOrEqual(testPatternBarsShown(in: picture), 2, "aiortc's picture \(index) through Janus shows the test pattern")
        }

        // Chromium with the key, then without, on our page subscribing through Janus.
        let page = "http://127.0.0.1:18080/?janus=\(JanusHarness.apiURL)&room=\(room)"
        let fragment = "#key=" + passphrase.utf8.map { String(format: "%%%02X", $0) }.joined()
        let keyed = try browse(janus, page + fragment, steps: [["wait": "decoded", "more": 60], ["pixels": true]])
        let shown = keyed.last ?? [:]
        print("janus: chromium with the key through Janus: \(shown["overlay"] ?? "-"), \(shown["framesDecoded"] ?? 0) frames")
        XCTAssertGreaterThanOrEqual(shown["framesDecoded"] as? Int ?? 0, 60)
        XCTAssertEqual(shown["e2eeState"] as? String, "decrypting")
        XCTAssertEqual(testPatternBarsShown(rgb: shown["pixels"] as? [[Int]] ?? []), 8, "the pixels through Janus: \(shown["pixels"] ?? "none")")
        let locked = try browse(janus, page, steps: [["wait": "state", "state": "no-key", "received": 30], ["hold": 1]])
        let blind = locked.last ?? [:]
        XCTAssertEqual(blind["framesDecoded"] as? Int, 0, "without the key Chromium decodes nothing")
        XCTAssertEqual(blind["message"] as? String, "This screen is end-to-end encrypted \u{2014} enter the key")
        XCTAssertEqual(try JanusCallTests.stats(path: "viewers")["count"] as? Int, 0, "nobody watched the call directly")

        // What Janus carried, against the encoder's own frames.
        XCTAssertTrue(ProcessRunner.terminate(call) == false, "the call stops on SIGTERM")
        let clear = Set(try IVFReader(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: recording)))).frames.map(\.bytes))
        XCTAssertGreaterThan(clear.count, 100)
        try checkCarried(frames, clear: clear)
    }

    /// Each frame aiortc reassembled from Janus's RTP: the FrameCryptor layout with key index 3 and its
    /// trailer, the clear VP8 header (keyframes: the start code and 640x360), ciphertext that shares no more
    /// bytes with the clear frame than chance would (1/256 a byte), and, decrypted, exactly one of the
    /// encoder's frames. The first keyframe among them, undecrypted, does not show the screen; decrypted, it
    /// and the frames after it do. (Janus forwards from where the subscriber joins: the first frames aiortc
    /// gets may be delta frames, before the keyframe Janus asked for.)
    func checkCarried(_ frames: [[UInt8]], clear: Set<[UInt8]>) throws {
        XCTAssertEqual(frames.count, 60)
        let decryptor = FrameDecryptor()
        try decryptor.setKey(try FrameKey.derive(passphrase: passphrase), at: 3)
        var plain: [[UInt8]] = []
        for (index, frame) in frames.enumerated() {
            let layout = try EncryptedFrameLayout(parsing: frame)
            XCTAssertEqual(layout.keyIndex, 3)
            XCTAssertEqual(Array(frame[(frame.count - 2)...]), [12, 3], "the trailer: ivLength 12, key index 3")
            if layout.isKeyframe {
                XCTAssertEqual(Array(frame[3..<6]), [0x9D, 0x01, 0x2A], "the keyframe's start code is clear")
                XCTAssertEqual(Int(frame[6]) | Int(frame[7]) << 8, width)
                XCTAssertEqual(Int(frame[8]) | Int(frame[9]) << 8, height)
            }
            let decrypted = try decryptor.decrypt(frame)
            XCTAssertTrue(clear.contains(decrypted), "frame \(index) decrypted is not one the encoder made")
            XCTAssertEqual(Array(decrypted[..<layout.clearLength]), Array(frame[..<layout.clearLength]))
            let same = zip(decrypted[layout.clearLength...], frame[layout.clearLength..<layout.tagOffset]).filter { $0 == $1 }.count
            XCTAssertLessThanOrEqual(
                same, 8 + layout.ciphertextLength / 64, "frame \(index): \(same) of \(layout.ciphertextLength) bytes past the clear header are clear")
            plain.append(decrypted)
        }
        let first = try XCTUnwrap(plain.firstIndex { $0[0] & 1 == 0 }, "no keyframe among the \(frames.count) frames")
        print("janus: the first keyframe is frame \(first) of those aiortc got through Janus (\(frames[first].count) bytes)")
        var picture = I420Buffer()
        if (try? VP8Decoder().decode(frames[first], into: &picture)) == true {
            XCTAssertLessThanOrEqual(testPatternBarsShown(in: picture), 2, "the carried keyframe, undecrypted, shows the screen")
        }
        let vp8 = try VP8Decoder()
        for frame in plain[first...] { _ = try vp8.decode(frame, into: &picture) }
        XCTAssertEqual(testPatternBarsShown(in: picture), 8, "decrypted with the key, the carried frames are the screen")
    }

    /// chromium_e2ee.py on `url`; its snapshots.
    func browse(_ janus: JanusHarness, _ url: String, steps: [[String: Any]]) throws -> [[String: Any]] {
        let profile = janus.folder.appendingPathComponent("chromium-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let points = barSamplePoints(width: width, height: height).map { "\($0.x),\($0.y)" }.joined(separator: ";")
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), [
            "HOME=\(profile)", "TMPDIR=\(profile)", "/usr/bin/python3", Self.browser.path, "--url", url, "--profile", profile + "/profile",
            "--steps", String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self), "--points", points, "--timeout", "60",
        ], timeout: 120)
        let line = try XCTUnwrap(result.stdout.split(separator: "\n").last, "chromium printed nothing: \(result.stderr.suffix(3000))")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertNil(report["error"] as? String, "\(report)")
        return report["snapshots"] as? [[String: Any]] ?? []
    }

    /// The I420 pictures appended to `path` (none when the file does not exist).
    static func pictures(at path: String, width: Int, height: Int) throws -> [I420Buffer] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let size = width * height * 3 / 2
        XCTAssertEqual(data.count % size, 0)
        return try stride(from: 0, to: data.count - size + 1, by: size).map {
            try I420Buffer(width: width, height: height, bytes: Array(data[$0..<$0 + size]), colorSpace: .bt601Limited)
        }
    }
}
