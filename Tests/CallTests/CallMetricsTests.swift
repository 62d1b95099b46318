import Call
import Foundation
import ScreencastSupport
import Signaling
import TestSupport
import VideoSource
import XCTest

/// ``Call/metricsText`` in-process: an encrypting call with an IVF recording, its `/metrics` against the same
/// counters `/stats` shows (the E2EE frames, the outputs' state), and every line in the format's grammar.
final class CallMetricsTests: CallTestCase {
    func testMetricsCarryTheOutputsAndTheEncryptedFrames() throws {
        let keyFile = folder.path("key")
        XCTAssertTrue(FileManager.default.createFile(atPath: keyFile, contents: Data("a passphrase\n".utf8)))
        XCTAssertEqual(chmod(keyFile, 0o600), 0)
        var configuration = CallConfiguration(source: VideoSourceConfiguration(
            socketPath: nil, fallback: .testPattern(TestPatternSettings(width: 160, height: 96, framesPerSecond: 15)), maxFramesPerSecond: 15))
        configuration.http = nil
        configuration.statsIntervalSeconds = 0
        configuration.recordIVF = folder.path("out.ivf")
        configuration.e2ee = E2EESettings(passphrase: "a passphrase", keyFile: keyFile, keyIndex: 0)
        let call = try Call(configuration: configuration, logger: Logger(component: "call", threshold: .error), announce: { _ in })
        try call.start()
        defer { call.stop() }
        let deadline = Date().addingTimeInterval(10)
        var text = call.metricsText
        while value(text, "screencast_e2ee_frames_encrypted_total") < 5, Date() < deadline {
            usleep(50_000)
            text = call.metricsText
        }
        XCTAssertGreaterThanOrEqual(value(text, "screencast_e2ee_frames_encrypted_total"), 5, text)
        XCTAssertEqual(value(text, "screencast_e2ee_frames_dropped_total"), 0)
        XCTAssertTrue(text.contains("screencast_output_state{output=\"ivf\",state=\"running\"} 1\n"), text)
        XCTAssertGreaterThanOrEqual(value(text, "screencast_frames_encoded_total"), value(text, "screencast_e2ee_frames_encrypted_total"))
        XCTAssertEqual(value(text, "screencast_viewers_max"), 16)
        XCTAssertTrue(text.contains("screencast_build_info{version=\"\(ScreencastVersion.string)\"} 1\n"))

        // Every line: a HELP or TYPE comment, or `name{labels} value` (exposition format 0.0.4's grammar);
        // every family's TYPE right after its HELP, each family once.
        let sample = try NSRegularExpression(
            pattern: #"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$"#)
        var families: [String] = []
        let lines = text.split(separator: "\n").map(String.init)
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("# HELP ") {
                let name = String(line.split(separator: " ")[2])
                XCTAssertFalse(families.contains(name), "\(name) twice")
                families.append(name)
                XCTAssertTrue(lines[index + 1].hasPrefix("# TYPE \(name) "), lines[index + 1])
            } else if !line.hasPrefix("# TYPE ") {
                XCTAssertNotNil(sample.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)), line)
            }
        }
        XCTAssertGreaterThan(families.count, 25)
    }

    /// The value of the first sample of `name` without labels.
    private func value(_ text: String, _ name: String) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") { return Double(line.split(separator: " ")[1]) ?? -1 }
        return -1
    }
}
