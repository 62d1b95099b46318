import Capture
import Foundation
import FrameSocket
import FrameWire
import Media
import ScreencastSupport
import Synchronization
import TestSupport
import XCTest
import XTestSupport

/// `screencast-agent --format shm` under a real X server, read by a real ``FrameServer``: the pictures the
/// reader maps are the screen's pixels exactly (BGRX, no conversion on the way), in alternating slots of one
/// memfd, with the seqlock versions the headers name; a keepalive names the last slot again.
final class AgentSharedMemoryTests: XServerTestCase {
    func testSharedPicturesAreTheScreenExactly() throws {
        let pattern = TestImages.pattern(width: 320, height: 240)
        client.setRootBackground(pattern)
        let folder = try TemporaryDirectory(prefix: "sc-shm")
        defer { folder.remove() }
        let path = try SocketPath(folder.path("agent.sock"))
        let frames = Mutex<[Frame]>([])
        let ended = Mutex<[SourceEndReason]>([])
        let reader = FrameServer(path: path, logger: Logger(component: "server", threshold: .warning)) { event in
            switch event {
            case .frame(let frame, _): frames.withLock { $0.append(frame) }
            case .senderEnded(_, let reason): ended.withLock { $0.append(reason) }
            default: break
            }
        }
        try reader.start()
        defer { reader.stop() }
        let result = try ProcessRunner.run(
            TestPaths.executable("screencast-agent"),
            ["--display", server.display, "--cursor", "off", "--socket", path.string, "--format", "shm", "--frames", "3",
             "--keepalive", "0.1"], timeout: 20)
        XCTAssertEqual(result.status, 0, result.stderr)
        let deadline = Date(timeIntervalSinceNow: 5)
        while ended.withLock({ $0.isEmpty }), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(ended.withLock { $0 }, [.stream(.eof)])
        let got = frames.withLock { $0 }
        XCTAssertEqual(got.count, 3)
        XCTAssertEqual(got.map(\.header.format), [.sharedBGRX, .sharedBGRX, .sharedBGRX])
        XCTAssertEqual(got.map(\.body), [[0x0A], [0x0A], [0x0A]])
        XCTAssertEqual(got.map(\.header.sequence), [0, 1, 2])
        let picture = try XCTUnwrap(got.first?.sharedPicture)
        XCTAssertTrue(got.allSatisfy { $0.sharedPicture === picture }, "one memfd, mapped once")
        XCTAssertEqual([picture.width, picture.height, picture.stride], [320, 240, 1280])
        let first = try XCTUnwrap(got.first?.header.memory)
        XCTAssertEqual(first, SharedPictureReference(generation: 1, slot: 0, version: 2))
        for frame in got.dropFirst() {
            // Keepalives (nothing changes on the screen) name the same slot and version again.
            XCTAssertEqual(frame.header.memory, first)
        }
        XCTAssertTrue(picture.isIntact(slot: 0, version: 2))
        // Every pixel's B, G, R as the X server holds them (the fourth byte is unused).
        let slot = picture.pixels(slot: 0)
        var differing = 0
        pattern.withUnsafeBytes { screen in
            for index in stride(from: 0, to: screen.count, by: 4) where
                slot[index] != screen[index] || slot[index + 1] != screen[index + 1] || slot[index + 2] != screen[index + 2] {
                differing += 1
            }
        }
        XCTAssertEqual(differing, 0, "pixels that differ from the screen")
    }
}
