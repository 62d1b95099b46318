import Capture
import Foundation
import Media
import XCTest
import XTestSupport

/// Monitors and resizes need Xvnc: Xvfb can neither resize nor define RandR monitors.
final class XvncTests: XServerTestCase {
    override var serverKind: XServerProcess.Kind { .xvnc }
    override var screenSize: (width: Int, height: Int) { (640, 480) }

    func testMonitorCaptureByNameAndIndexMatchesTheCrop() throws {
        let pattern = TestImages.pattern(width: 640, height: 480)
        client.setRootBackground(pattern)
        try server.run("xrandr", ["--setmonitor", "left", "300/80x200/60+20+30", "none"])
        try server.run("xrandr", ["--setmonitor", "right", "320/80x480/120+320+0", "none"])
        let monitors = try ScreenCapture.listMonitors(display: server.display)
        let left = try XCTUnwrap(monitors.first { $0.name == "left" }, "\(monitors)")
        XCTAssertEqual(left.area, CaptureRect(x: 20, y: 30, width: 300, height: 200))
        XCTAssertTrue(monitors.contains { $0.name == "right" && $0.area == CaptureRect(x: 320, y: 0, width: 320, height: 480) })

        let byName = try captureOne(configuration { $0.quality = 90; $0.target = .monitor(.name("left")) })
        XCTAssertEqual([byName.width, byName.height], [300, 200])
        var psnr = TestImages.psnr(try TestImages.decode(byName.jpeg), TestImages.crop(pattern, left.area))
        XCTAssertGreaterThanOrEqual(psnr, 35, "monitor by name: PSNR \(psnr) dB at quality 90")

        let right = try XCTUnwrap(monitors.first { $0.name == "right" })
        let byIndex = try captureOne(configuration { $0.quality = 90; $0.target = .monitor(.index(right.index)) })
        XCTAssertEqual(byIndex.area, right.area)
        psnr = TestImages.psnr(try TestImages.decode(byIndex.jpeg), TestImages.crop(pattern, right.area))
        XCTAssertGreaterThanOrEqual(psnr, 35, "monitor by index: PSNR \(psnr) dB at quality 90")
    }

    func testUnknownMonitorIsAnError() throws {
        XCTAssertThrowsError(try startCapture(configuration { $0.target = .monitor(.name("nope")) })) { error in
            guard case .noSuchMonitor("nope", let available) = error as? CaptureError else {
                return XCTFail("\(error)")
            }
            XCTAssertFalse(available.isEmpty)
        }
    }

    func testResizeIsFollowedWithoutRestart() throws {
        client.setRootColor(0x446688)
        let (capture, collector) = try startCapture(configuration())
        collector.wait(count: 1)
        try server.run("xrandr", ["-s", "800x600"])
        let frames = collector.wait(timeout: 3) { $0.contains { $0.width == 800 } }
        try server.run("xrandr", ["-s", "1024x768"])
        let later = collector.wait(timeout: 3) { $0.contains { $0.width == 1024 } }
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        XCTAssertEqual([frames.first?.width, frames.first?.height], [640, 480])
        let resized = try XCTUnwrap(frames.first { $0.width == 800 }, "no 800x600 frame: \(frames.map { "\($0.width)x\($0.height)" })")
        XCTAssertEqual(resized.height, 600)
        XCTAssertEqual(resized.area, CaptureRect(x: 0, y: 0, width: 800, height: 600))
        let decoded = try TestImages.decode(resized.jpeg)
        XCTAssertEqual([decoded.width, decoded.height], [800, 600])
        XCTAssertTrue(later.contains { $0.width == 1024 && $0.height == 768 }, "second resize not followed")
        XCTAssertTrue(logs.lines.contains { $0.contains("capture area changed") })
    }

    /// `--format shm` through two resizes: each new size is a new memfd of the next generation, sized for
    /// it, holding the screen's colour in every pixel.
    func testSharedMemoryFollowsResizesWithNewGenerations() throws {
        client.setRootColor(0x446688)
        let (capture, collector) = try startCapture(configuration { $0.format = .shm })
        collector.wait(count: 1)
        try server.run("xrandr", ["-s", "800x600"])
        _ = collector.wait(timeout: 3) { $0.contains { $0.width == 800 } }
        try server.run("xrandr", ["-s", "1024x768"])
        let frames = collector.wait(timeout: 3) { $0.contains { $0.width == 1024 } }
        capture.stop()
        XCTAssertEqual(capture.wait(timeout: 5), .stopped)
        var bySize: [String: (generation: UInt64, frame: CapturedFrame)] = [:]
        for frame in frames {
            let shared = try XCTUnwrap(frame.shared, "a shm frame without its memory")
            XCTAssertEqual(frame.body, [0x0A])
            XCTAssertEqual([shared.picture.width, shared.picture.height], [frame.width, frame.height])
            XCTAssertEqual(shared.reference.generation, shared.picture.generation)
            bySize["\(frame.width)x\(frame.height)"] = bySize["\(frame.width)x\(frame.height)"] ?? (shared.picture.generation, frame)
        }
        XCTAssertEqual(bySize.mapValues(\.generation), ["640x480": 1, "800x600": 2, "1024x768": 3])
        let last = try XCTUnwrap(bySize["1024x768"]?.frame.shared)
        XCTAssertTrue(last.picture.isIntact(slot: last.reference.slot, version: last.reference.version))
        let pixels = last.picture.pixels(slot: last.reference.slot)
        var wrong = 0
        for index in stride(from: 0, to: pixels.count, by: 4) where (pixels[index], pixels[index + 1], pixels[index + 2]) != (0x88, 0x66, 0x44) {
            wrong += 1
        }
        XCTAssertEqual(wrong, 0, "pixels of another colour than the screen's")
    }

    func testMonitorCaptureFollowsTheMonitorThroughAResize() throws {
        let monitors = try ScreenCapture.listMonitors(display: server.display)
        let output = try XCTUnwrap(monitors.first { $0.area == CaptureRect(x: 0, y: 0, width: 640, height: 480) }, "\(monitors)")
        let (capture, collector) = try startCapture(configuration { $0.target = .monitor(.name(output.name)) })
        collector.wait(count: 1)
        try server.run("xrandr", ["-s", "800x600"])
        let frames = collector.wait(timeout: 3) { $0.contains { $0.width == 800 } }
        capture.stop()
        capture.wait(timeout: 5)
        XCTAssertTrue(frames.contains { $0.area == CaptureRect(x: 0, y: 0, width: 800, height: 600) },
                      "monitor \(output.name) not followed: \(frames.map(\.area))")
    }

    func testRegionThatLeavesTheScreenEndsTheCapture() throws {
        try server.run("xrandr", ["-s", "800x600"])
        let region = CaptureRect(x: 700, y: 500, width: 50, height: 50)
        let (capture, collector) = try startCapture(configuration { $0.target = .region(region) })
        XCTAssertEqual(collector.wait(count: 1).first?.area, region)
        try server.run("xrandr", ["-s", "640x480"])
        XCTAssertEqual(capture.wait(timeout: 3), .failed(.regionOutsideScreen(region: region, screenWidth: 640, screenHeight: 480)))
    }

    func testScaledCaptureFollowsResizeToo() throws {
        let (capture, collector) = try startCapture(configuration { $0.outputSize = .scale(0.5) })
        collector.wait(count: 1)
        try server.run("xrandr", ["-s", "800x600"])
        let frames = collector.wait(timeout: 3) { $0.contains { $0.width == 400 } }
        capture.stop()
        capture.wait(timeout: 5)
        XCTAssertEqual([frames.first?.width, frames.first?.height], [320, 240])
        XCTAssertTrue(frames.contains { $0.width == 400 && $0.height == 300 }, "\(frames.map { "\($0.width)x\($0.height)" })")
    }
}
