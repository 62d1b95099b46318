import Foundation
import FrameWire
import Glibc
import ScreencastSupport
import TestSupport
import XCTest

@testable import FrameSocket

/// A reader process stopped with SIGSTOP for 10 s while the sender offers 30 fps of 1 MB frames:
/// the sender drops (and counts) frames instead of queueing them, and delivery resumes after SIGCONT.
final class StoppedReaderTests: SocketTestCase {
    override var timeLimit: Double { 45 }

    /// A Unix-socket server that reads one connection to its end and prints the byte count.
    private static let reader = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[1]); s.listen(1)
        c, _ = s.accept()
        total = 0
        while True:
            b = c.recv(1 << 20)
            if not b:
                break
            total += len(b)
        print(total, flush=True)
        """

    /// Resident set size of this process in bytes (`/proc/self/statm`, field 2, in pages).
    private func residentBytes() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func testStoppedReaderMakesTheSenderDropNotQueue() throws {
        guard python3() != nil else { return XCTFail("python3 is not installed; run tools/setup") }
        let path = try socketPath()
        let (process, output) = try startPython(Self.reader, [path.string])
        defer { finish(process, timeout: 1) }
        XCTAssertTrue(waitUntil(timeout: 10) { fileMode(path.string)?.type == S_IFSOCK }, "the python reader did not start")

        let sender = try FrameSender(path: path, logger: logger("sender"))
        XCTAssertTrue(waitUntil(timeout: 5) { sender.stats.isConnected })
        let frameBytes = 1 << 20
        var sequence: UInt64 = 0
        /// Offers frames at 30 fps for `duration` seconds; returns the largest buffered byte count seen.
        func offer(for duration: Double) -> Int {
            var largest = 0
            let frames = Int(duration * 30)
            for _ in 0..<frames {
                let header = FrameHeader(
                    contentLength: frameBytes, bufferWidth: 1920, bufferHeight: 1080, orientation: 1,
                    timestampMicros: MonotonicClock.nowMicros(), sequence: sequence)
                sequence += 1
                sender.offer(FrameEncoder.encode(header: header, body: [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: frameBytes)))
                largest = max(largest, sender.stats.bufferedBytes)
                usleep(33_333)
            }
            return largest
        }

        // Running reader: frames flow.
        _ = offer(for: 1)
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        let beforeStop = sender.stats
        XCTAssertGreaterThan(beforeStop.sentFrames, 20)

        XCTAssertEqual(kill(process.processIdentifier, SIGSTOP), 0)
        usleep(200_000)  // let the reader really stop
        let baselineRSS = residentBytes()
        let stoppedFrom = sender.stats
        let largestBuffered = offer(for: 10)
        let duringStop = sender.stats
        let grownRSS = residentBytes() - baselineRSS

        // 300 frames of 1 MB were offered; queueing them would be ~300 MB.
        XCTAssertLessThanOrEqual(largestBuffered, 2 * (frameBytes + 1024), "more than one pending + one in-flight frame")
        XCTAssertLessThan(grownRSS, 64 << 20, "memory grew by \(grownRSS >> 20) MiB while the reader was stopped")
        XCTAssertLessThanOrEqual(duringStop.sentFrames - stoppedFrom.sentFrames, 2, "frames were 'sent' to a stopped reader")
        XCTAssertGreaterThanOrEqual(duringStop.droppedFrames - stoppedFrom.droppedFrames, 290)
        XCTAssertEqual(duringStop.connects, 1, "the sender gave up on a connection that was only slow")

        XCTAssertEqual(kill(process.processIdentifier, SIGCONT), 0)
        _ = offer(for: 1)
        XCTAssertTrue(sender.flush(timeout: .seconds(5)))
        let afterResume = sender.stats
        XCTAssertGreaterThan(afterResume.sentFrames - duringStop.sentFrames, 20, "delivery did not resume after SIGCONT")
        XCTAssertEqual(afterResume.sentFrames + afterResume.droppedFrames, Int(sequence), "every offered frame is sent or counted as dropped")

        sender.close()
        XCTAssertTrue(finish(process, timeout: 10), "the reader did not see the end of the stream")
        let reported = String(decoding: POSIXPipeRead.toEnd(output.fileHandleForReading.fileDescriptor), as: UTF8.self)
        XCTAssertEqual(Int(reported.trimmingCharacters(in: .whitespacesAndNewlines)), afterResume.sentBytes,
                       "the reader received other than the bytes the sender counted as sent")
        unlink(path.string)
    }
}
