import FrameCrypto
import Foundation
import Media
import TestSupport
import XCTest

/// What a peer without the key gets from a call that encrypts end to end: aiortc (an SFU would see the
/// same) receives every RTP packet and reassembles the frames, but libvpx refuses them or, now and then,
/// makes a picture of noise from one (the clear header still parses): never the screen. The frames carry
/// only the clear VP8 header, and with the key they are the test pattern.
final class AiortcE2EETests: XCTestCase {
    func testAViewerWithoutTheKeyReceivesPacketsButDecodesNoFrame() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.AiortcE2EETests/testAViewerWithoutTheKeyReceivesPacketsButDecodesNoFrame", timeout: 120)
        }
        guard EndToEnd.requireTools([EndToEnd.venvPython, TestPaths.executable("screencast-call")]) else { return }
        let keys = try TemporaryDirectory(prefix: "sc-e2ee")
        defer { keys.remove() }
        let passphrase = "aiortc never learns this"
        XCTAssertTrue(FileManager.default.createFile(atPath: keys.path("key"), contents: Data(passphrase.utf8), attributes: [.posixPermissions: 0o600]))
        let call = try CallUnderTest(["--source", "testpattern", "--pattern-size", "640x360", "--e2ee-key-file", keys.path("key"), "--e2ee-key-index", "4"])
        defer { call.stop() }
        let saved = call.folder.path("last.yuv")
        let report = try EndToEnd.runPeer(
            EndToEnd.venvPython, "whep_viewer.py", ["--url", call.whepURL, "--seconds", "4", "--record-frames", "3", "--save-last", saved], timeout: 60)
        let viewer = try XCTUnwrap((report["viewers"] as? [[String: Any]])?.first, "\(report)")
        var decoder = try XCTUnwrap(report["decoder"] as? [String: Any], "\(report)")
        let frames = (decoder.removeValue(forKey: "frames") as? [String] ?? []).map { bytes(hex: $0) }
        print("e2e: aiortc without the key: viewer \(viewer), decoder \(decoder)")
        // Packets in the viewer's 4 s: about one a frame of the 640x360 pattern, so the count follows the frame
        // rate the call reaches after its start (rehearsals: 79, 119 and 125); the point is that they arrive.
        XCTAssertGreaterThan((viewer["inbound"] as? [String: Any])?["packetsReceived"] as? Int ?? 0, 60, "the packets arrive")
        let attempts = decoder["attempts"] as? Int ?? 0, pictures = decoder["pictures"] as? Int ?? 0
        XCTAssertGreaterThan(attempts, 60, "aiortc reassembles the frames and hands them to libvpx")
        XCTAssertGreaterThan(decoder["errors"] as? Int ?? 0, attempts / 2, "libvpx refuses most of them")
        XCTAssertEqual(viewer["frames"] as? Int, pictures)
        // Measured: 0 of 116 decoded in one run, 9 of 117 (noise) in another. Whatever came out is not the screen.
        if pictures > 0 {
            let noise = try I420Buffer(width: 640, height: 360, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: saved))), colorSpace: .bt601Limited)
            print("e2e: aiortc's last picture (of \(pictures) libvpx made) shows \(testPatternBarsShown(in: noise)) of 8 bars")
            XCTAssertLessThanOrEqual(testPatternBarsShown(in: noise), 2, "aiortc's last picture shows the test pattern")
        }

        // What aiortc got: the clear VP8 header (a keyframe, 640x360), the ciphertext and the trailer.
        XCTAssertEqual(frames.count, 3)
        let keyframe = try XCTUnwrap(frames.first)
        let layout = try EncryptedFrameLayout(parsing: keyframe)
        XCTAssertTrue(layout.isKeyframe)
        XCTAssertEqual(layout.keyIndex, 4)
        XCTAssertEqual(Array(keyframe[3..<6]), [0x9D, 0x01, 0x2A])
        XCTAssertEqual(Int(keyframe[6]) | Int(keyframe[7]) << 8, 640)
        XCTAssertEqual(Int(keyframe[8]) | Int(keyframe[9]) << 8, 360)
        // Our libvpx reads no screen from it either; decrypted with the key it is the test pattern.
        var picture = I420Buffer()
        if (try? VP8Decoder().decode(keyframe, into: &picture)) == true {
            XCTAssertLessThanOrEqual(testPatternBarsShown(in: picture), 2, "the encrypted keyframe shows the test pattern")
        }
        let decryptor = FrameDecryptor()
        try decryptor.setKey(try FrameKey.derive(passphrase: passphrase), at: 4)
        let vp8 = try VP8Decoder()
        XCTAssertTrue(try vp8.decode(try decryptor.decrypt(keyframe), into: &picture))
        XCTAssertEqual([picture.width, picture.height], [640, 360])
        XCTAssertEqual(testPatternBarsShown(in: picture), 8)
        for frame in frames.dropFirst() { _ = try vp8.decode(try decryptor.decrypt(frame), into: &picture) }

        let summary = try HTTP.request("GET", port: call.port, path: "/stats?format=text").text
        XCTAssertTrue(summary.contains("; end-to-end encrypted, key index 4\n"), summary)
    }
}
