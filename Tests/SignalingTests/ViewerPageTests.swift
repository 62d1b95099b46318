import Foundation
import Signaling
import TestSupport
import XCTest

/// The viewer page's text: what it must contain (the WHEP client's pieces) and must not (external
/// resources). Chromium runs it in ChromiumViewerTests.
final class ViewerPageTests: XCTestCase {
    private let page = ViewerPage.html

    func testFullWindowMutedVideo() {
        XCTAssertTrue(page.hasPrefix("<!doctype html>"))
        XCTAssertTrue(page.contains("<video id=\"video\" muted autoplay playsinline>"))
        XCTAssertTrue(page.contains("object-fit: contain"))
    }

    func testWHEPClientPieces() {
        for needle in [
            #"addTransceiver("video", { direction: "recvonly" })"#, #""Content-Type": "application/sdp""#, #"method: "POST""#,
            #"response.headers.get("Location")"#, "new URL(location, whepURL)", #"method: "DELETE""#, "setRemoteDescription",
            "iceGatheringState", "gatherLimitMs = 2000", #"params.get("token")"#, #""Bearer " + token"#, #"params.get("whep") || "/whep""#,
            "Math.pow(2, viewer.attempt)", "maxBackoffMs = 30000", "connectionState", "getStats", "framesPerSecond", "bytesReceived",
            "currentRoundTripTime", "frameWidth", "requestFullscreen", "requestPictureInPicture", "document.body.dataset.viewer = \"ready\"",
        ] {
            XCTAssertTrue(page.contains(needle), "page lacks \(needle)")
        }
    }

    /// The sound: an audio transceiver after the video's, muted at first with an Unmute button (key m), a meter
    /// from the audio receiver's getStats, and a note when the answer carried no sound.
    func testSoundPieces() {
        for needle in [
            #"pc.addTransceiver("audio", { direction: "recvonly" })"#, #"<button id="unmute" type="button""#, #"data-muted="yes""#,
            #"id="meter""#, "event.track.kind === \"audio\"", "inbound.audioLevel", "totalSamplesReceived", "concealedSamples",
            "no sound in this share", #"event.key === "m") toggleSound()"#, "video.muted = !video.muted",
        ] {
            XCTAssertTrue(page.contains(needle), "page lacks \(needle)")
        }
        let video = page.range(of: #"addTransceiver("video""#)!.lowerBound, audio = page.range(of: #"addTransceiver("audio""#)!.lowerBound
        XCTAssertLessThan(video, audio, "the video's m-line stays first (mid 0)")
    }

    /// `node --check` on the inline script and on the e2ee worker's (a syntax check without a browser;
    /// skipped without node).
    func testScriptParses() throws {
        let node = "/usr/bin/node"
        guard FileManager.default.isExecutableFile(atPath: node) else { throw XCTSkip("node is not installed") }
        for (name, opening) in [("page", "<script>"), ("worker", #"<script id="e2ee-worker" type="text/js-worker">"#)] {
            let start = try XCTUnwrap(page.range(of: opening), name).upperBound
            let end = try XCTUnwrap(page.range(of: "</script>", range: start..<page.endIndex), name).lowerBound
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("viewer-\(name)-\(ProcessInfo.processInfo.processIdentifier).js")
            try String(page[start..<end]).write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try ProcessRunner.run(URL(fileURLWithPath: node), ["--check", file.path], timeout: 30)
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
        }
    }

    func testSelfContained() {
        for needle in ["src=\"http", "href=\"http", "<link ", "<script src", "@import", "//cdn"] {
            XCTAssertFalse(page.contains(needle), "page loads something external: \(needle)")
        }
        XCTAssertEqual(page.components(separatedBy: "<script>").count, 2)
        // One page, served once per viewer: 40 KiB since it plays and decrypts the sound too (34,345 bytes then;
        // 32 KiB before the sound).
        XCTAssertLessThan(page.utf8.count, 40 * 1024)
    }
}
