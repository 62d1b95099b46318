import Foundation
import FrameWire
import Media
import TestSupport
import XCTest

/// The recorded dumps in Tests/Fixtures (see its README) stay well-formed and show what they claim.
final class FixtureTests: XCTestCase {
    private func load(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Frame] {
        let path = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/\(name).frames").path
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertLessThan(size, 1_500_000, "\(name) is meant to stay small", file: file, line: line)
        let (frames, end) = try DumpReader.frames(path)
        XCTAssertEqual(end, .eof, file: file, line: line)
        let decoder = try JPEGDecoder()
        for frame in frames {
            XCTAssertEqual([frame.header.bufferWidth, frame.header.bufferHeight], [640, 360], file: file, line: line)
            XCTAssertEqual(frame.header.orientation, 1, file: file, line: line)
            let picture = try decoder.decodeI420(frame.body)
            XCTAssertEqual([picture.width, picture.height], [640, 360], file: file, line: line)
        }
        XCTAssertEqual(frames.compactMap(\.header.sequence), (0..<UInt64(frames.count)).map { $0 }, file: file, line: line)
        let stamps = frames.compactMap(\.header.timestampMicros)
        XCTAssertEqual(stamps.count, frames.count, file: file, line: line)
        XCTAssertEqual(stamps, stamps.sorted(), file: file, line: line)
        return frames
    }

    func testTerminalScroll() throws {
        let frames = try load("terminal-scroll")
        XCTAssertGreaterThanOrEqual(frames.count, 15)
        let distinct = Set(frames.map(\.body)).count
        XCTAssertEqual(distinct, frames.count, "the text moves in every frame")
    }

    func testStaticDesktop() throws {
        let frames = try load("static-desktop")
        XCTAssertTrue((3...5).contains(frames.count), "\(frames.count) frames")
        guard frames.count >= 3 else { return }
        XCTAssertNotEqual(frames[0].body, frames[1].body, "frame 1 is the paint-over")
        XCTAssertEqual(try JPEGDecoder().readHeader(frames[1].body).subsampling, .yuv444)
        for keepalive in frames.dropFirst(2) { XCTAssertEqual(keepalive.body, frames[1].body) }
        let seconds = frames.map { Double(($0.header.timestampMicros ?? 0) - (frames[0].header.timestampMicros ?? 0)) / 1e6 }
        XCTAssertEqual(seconds[1], 1, accuracy: 0.3)
        XCTAssertEqual(seconds[2] - seconds[1], 2, accuracy: 0.3)
    }

    func testWindowDrag() throws {
        let frames = try load("window-drag")
        XCTAssertGreaterThanOrEqual(frames.count, 30)
    }
}
