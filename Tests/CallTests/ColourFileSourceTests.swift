import Foundation
import FrameWire
import Media
import TestSupport
import XCTest

/// The colour chart played by a real `screencast-call` from a dump (`--source file:`), recorded
/// (`--record-ivf`) and decoded by libvpx: a JPEG dump, a limited-range I420 dump (as the agent writes it
/// now) and a full-range I420 dump without `Buffer-Color-Range` (as older agents wrote it) all end in the
/// chart's colours — every patch within 4 levels in RGB, PSNR ≥ 38 dB — once the call has refined the
/// still picture.
final class ColourFileSourceTests: CallTestCase {
    /// A dump of the chart shown for 1.2 s (the picture, then a keepalive of it), played by the call; the
    /// last picture of its recording.
    private func lastRecordedPicture(body: [UInt8], format: BufferFormat, colorRange: BufferColorRange?) throws -> I420Buffer {
        var dump: [UInt8] = []
        for (index, timestamp) in [1_000_000, 2_200_000].enumerated() {
            let header = FrameHeader(contentLength: body.count, bufferWidth: ColourChart.width, bufferHeight: ColourChart.height,
                                     timestampMicros: UInt64(timestamp), sequence: UInt64(index), format: format, colorRange: colorRange)
            dump += FrameEncoder.encode(header: header, body: body)
        }
        let path = folder.path("chart.frames")
        try Data(dump).write(to: URL(fileURLWithPath: path))
        let ivf = folder.path("chart.ivf")
        let run = try RunningCall(["--socket", socket, "--http", "off", "--source", "file:\(path)", "--exit-when-source-ends",
                                   "--record-ivf", ivf, "--stats-interval", "0"])
        XCTAssertEqual(run.waitForExit(timeout: 20), 0, run.logText)
        let (_, frames) = try decodeIVF(ivf)
        XCTAssertGreaterThanOrEqual(frames.count, 3, "the picture and its refinements")
        return try XCTUnwrap(frames.last?.picture)
    }

    private func check(_ picture: I420Buffer, _ what: String) {
        XCTAssertEqual(picture.colorSpace, .bt601Limited)
        let reading = ColourChart.read(picture)
        print("colour chart from a \(what) dump: \(reading)")
        XCTAssertLessThanOrEqual(reading.worstDifference, 4, "\(what): \(reading.offenders(tolerance: 4))")
        XCTAssertGreaterThanOrEqual(reading.psnr, 38, "\(what): \(reading)")
    }

    func testAJPEGDumpPlaysInTheScreensColours() throws {
        let jpeg = try BGRXJPEGEncoder().encode(ColourChart.image(), quality: 90, subsampling: .yuv420)
        check(try lastRecordedPicture(body: jpeg, format: .jpeg, colorRange: nil), "JPEG")
    }

    func testALimitedRangeI420DumpPlaysInTheScreensColours() throws {
        var picture = I420Buffer()
        try BGRXToYUV.convertToI420(ColourChart.image(), range: .limited, into: &picture)
        check(try lastRecordedPicture(body: picture.bytes, format: .i420, colorRange: .limited), "limited-range I420")
    }

    func testAnOldFullRangeI420DumpPlaysInTheScreensColours() throws {
        var picture = I420Buffer()
        try BGRXToYUV.convertToI420(ColourChart.image(), range: .full, into: &picture)
        check(try lastRecordedPicture(body: picture.bytes, format: .i420, colorRange: nil), "full-range I420 (no Buffer-Color-Range)")
    }
}
