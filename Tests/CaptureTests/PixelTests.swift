import Capture
import Media
import XCTest
import XTestSupport

/// A known picture on the root window of a real Xvfb, captured, decoded, compared.
final class PixelTests: XServerTestCase {
    private var pattern = BGRXImage()

    override func setUpWithError() throws {
        try super.setUpWithError()
        pattern = TestImages.pattern(width: screenSize.width, height: screenSize.height)
        client.setRootBackground(pattern)
    }

    func testRootCaptureMatchesThePictureWithSharedMemory() throws {
        let frame = try captureOne(configuration { $0.quality = 90 })
        XCTAssertEqual(frame.kind, .change)
        XCTAssertEqual(frame.index, 0)
        XCTAssertEqual(frame.quality, 90)
        XCTAssertEqual([frame.width, frame.height], [320, 240])
        let decoded = try TestImages.decode(frame.jpeg)
        XCTAssertEqual([decoded.width, decoded.height], [320, 240])
        let psnr = TestImages.psnr(decoded, pattern)
        XCTAssertGreaterThanOrEqual(psnr, 35, "PSNR \(psnr) dB at quality 90")
        XCTAssertTrue(logs.lines.contains { $0.contains("capturing with MIT-SHM") }, "\(logs.lines)")
    }

    func testGetImageFallbackGivesTheSamePicture() throws {
        let frame = try captureOne(configuration { $0.quality = 90; $0.usesSharedMemory = false })
        let psnr = TestImages.psnr(try TestImages.decode(frame.jpeg), pattern)
        XCTAssertGreaterThanOrEqual(psnr, 35, "PSNR \(psnr) dB at quality 90")
        XCTAssertEqual(logs.lines.filter { $0.contains("capturing with GetImage") }.count, 1, "\(logs.lines)")
    }

    func testRegionCaptureMatchesTheCrop() throws {
        let region = CaptureRect(x: 37, y: 21, width: 150, height: 101)
        let frame = try captureOne(configuration { $0.quality = 90; $0.target = .region(region) })
        XCTAssertEqual([frame.width, frame.height], [150, 101])
        XCTAssertEqual(frame.area, region)
        let psnr = TestImages.psnr(try TestImages.decode(frame.jpeg), TestImages.crop(pattern, region))
        XCTAssertGreaterThanOrEqual(psnr, 35, "PSNR \(psnr) dB at quality 90")
        // The same region one pixel off must compare clearly worse: the crop is exact.
        let shifted = TestImages.crop(pattern, CaptureRect(x: 38, y: 22, width: 150, height: 101))
        XCTAssertLessThan(TestImages.psnr(try TestImages.decode(frame.jpeg), shifted), psnr - 3)
    }

    func testScaleHalfGivesHalfTheSize() throws {
        let frame = try captureOne(configuration { $0.quality = 90; $0.outputSize = .scale(0.5) })
        XCTAssertEqual([frame.width, frame.height], [160, 120])
        let decoded = try TestImages.decode(frame.jpeg)
        XCTAssertEqual([decoded.width, decoded.height], [160, 120])
        var reference = BGRXImage()
        try pattern.withPixels { try BGRXScaler.scale($0, toWidth: 160, height: 120, into: &reference) }
        let psnr = TestImages.psnr(decoded, reference)
        XCTAssertGreaterThanOrEqual(psnr, 30, "PSNR \(psnr) dB against a box-filtered reference")
    }

    func testMaxSizeFitsAndKeepsTheAspectRatio() throws {
        let frame = try captureOne(configuration { $0.outputSize = .fit(width: 200, height: 200) })
        XCTAssertEqual([frame.width, frame.height], [200, 150])
    }

    func testSubsampling444AndQualityReachTheJPEG() throws {
        let frame = try captureOne(configuration { $0.quality = 90; $0.subsampling = .yuv444 })
        let info = try JPEGDecoder().readHeader(frame.jpeg)
        XCTAssertEqual(info.subsampling, .yuv444)
        let psnr = TestImages.psnr(try TestImages.decode(frame.jpeg), pattern)
        XCTAssertGreaterThanOrEqual(psnr, 35, "PSNR \(psnr) dB at quality 90, 4:4:4")
    }

    func testRegionOutsideTheScreenIsRefused() {
        XCTAssertThrowsError(try startCapture(configuration { $0.target = .region(CaptureRect(x: 400, y: 0, width: 10, height: 10)) })) {
            XCTAssertEqual($0 as? CaptureError, .regionOutsideScreen(
                region: CaptureRect(x: 400, y: 0, width: 10, height: 10), screenWidth: 320, screenHeight: 240))
        }
    }
}
