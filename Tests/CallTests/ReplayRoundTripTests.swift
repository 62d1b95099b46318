import Foundation
import FrameWire
import Media
import TestSupport
import XCTest

/// Dumps replayed into a running `screencast-call --record-ivf`, the IVF decoded with libvpx and compared
/// with the source JPEGs decoded (and rotated as `Buffer-Orientation` says).
final class ReplayRoundTripTests: CallTestCase {
    /// What one round trip found at the end of each static stretch.
    struct StretchResult {
        var frameIndex: Int
        var expected: I420Buffer
        var decoded: I420Buffer
        var psnr: Double
    }

    /// A dump of stretches: each shows its pictures 100 ms apart, repeats the last one as a keepalive
    /// 0.8 s later, and is followed by the next stretch 1.5 s after its last change; the final stretch
    /// gets a second keepalive at +1.5 s, then the stream ends.
    private func stretchDump(
        _ stretches: [(pictures: [I420Buffer], orientation: Int)], format: BufferFormat = .jpeg
    ) throws -> String {
        var frames: [DumpFrame] = []
        var time: UInt64 = 1_000_000
        for (index, stretch) in stretches.enumerated() {
            for picture in stretch.pictures {
                frames.append(DumpFrame(picture: picture, orientation: stretch.orientation, timestamp: time, format: format))
                time += 100_000
            }
            let last = time - 100_000
            frames.append(DumpFrame(picture: stretch.pictures.last!, orientation: stretch.orientation, timestamp: last + 800_000, format: format))
            if index == stretches.count - 1 {
                frames.append(DumpFrame(picture: stretch.pictures.last!, orientation: stretch.orientation, timestamp: last + 1_500_000, format: format))
            }
            time = last + 1_500_000
        }
        let path = folder.path("stretches.frames")
        try Data(try makeDump(frames)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Replays `dumpPath` into a call with `--record-ivf` and checks counts, sizes and the picture at the
    /// end of every static stretch (a change that stays on screen ≥ 400 ms).
    @discardableResult
    private func roundTrip(_ dumpPath: String, file: StaticString = #filePath, line: UInt = #line) throws -> [StretchResult] {
        // The dump as the call should see it.
        var wire = FrameDecoder()
        var frames: [Frame] = []
        wire.feed([UInt8](try Data(contentsOf: URL(fileURLWithPath: dumpPath)))) { if case .frame(let f) = $0 { frames.append(f) } }
        XCTAssertFalse(frames.isEmpty, file: file, line: line)
        let jpeg = try JPEGDecoder()
        let expected: [I420Buffer?] = frames.map { frame in
            let picture = frame.header.format == .i420
                ? try? I420Buffer(width: frame.header.bufferWidth, height: frame.header.bufferHeight, bytes: frame.body, colorSpace: .bt601Full)
                : try? jpeg.decodeI420(frame.body)
            return picture.map { rotateClockwise($0, degrees: frame.header.rotation.degrees) }
        }
        let first = frames[0].header.timestampMicros ?? 0
        let times = frames.enumerated().map { index, frame in
            frame.header.timestampMicros.map { $0 - first } ?? UInt64(index) * 33_333
        }
        // Static stretches: a change (a new body or rotation) that stays on screen ≥ 400 ms, until the
        // next change or, for the last one, until the last frame (keepalives). A dump that ends right
        // after a change has no static stretch there.
        var changes: [Int] = []
        for index in frames.indices where expected[index] != nil {
            if let last = changes.last, frames[index].body == frames[last].body,
               frames[index].header.rotation == frames[last].header.rotation { continue }
            changes.append(index)
        }
        var ends: [(index: Int, until: UInt64?)] = []
        for (position, change) in changes.enumerated() {
            let next = position + 1 < changes.count ? changes[position + 1] : nil
            let staticFor = (next.map { times[$0] } ?? times[frames.count - 1]) - times[change]
            if staticFor >= 400_000 { ends.append((change, next.map { times[$0] })) }
        }

        let ivf = folder.path("out.ivf")
        let stats = folder.path("stats.json")
        let call = try startCall(["--record-ivf", ivf, "--exit-when-source-ends", "--stats-interval", "0", "--stats-file", stats])
        let replayed = try replay(dumpPath, socket: socket)
        XCTAssertEqual(call.waitForExit(timeout: 20), 0, call.logText, file: file, line: line)
        // Paced replay lets the newest frame win when the reader falls behind (a busy machine), so the
        // call must have received exactly what the sender says it sent, and that should be nearly all.
        let summary = replayed.stdout + replayed.stderr
        let droppedText = summary.range(of: #"dropped \d+"#, options: .regularExpression).map { summary[$0].dropFirst(8) }
        XCTAssertNotNil(droppedText, "replay summary: \(summary)", file: file, line: line)
        let senderDropped = droppedText.flatMap { Int($0) } ?? 0
        XCTAssertLessThanOrEqual(senderDropped, 2, "replay: \(summary)", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "socket removed", file: file, line: line)

        let json = try readStats(stats)
        XCTAssertEqual(number(json, "frames", "received"), frames.count - senderDropped, file: file, line: line)
        XCTAssertEqual(number(json, "frames", "decoded"), expected.compactMap { $0 }.count - senderDropped, file: file, line: line)
        let (header, decoded) = try decodeIVF(ivf)
        XCTAssertEqual(number(json, "frames", "encoded"), decoded.count, file: file, line: line)
        XCTAssertEqual(header.length, ivfLength(decoded.map(\.pts)), "IVF header flushed", file: file, line: line)
        XCTAssertEqual(decoded.first?.keyframe, true, file: file, line: line)
        let sizes = Set(expected.compactMap { $0.map { "\($0.width)x\($0.height)" } })
        for frame in decoded {
            XCTAssertTrue(sizes.contains("\(frame.picture.width)x\(frame.picture.height)"), file: file, line: line)
        }
        if let probe = try ffprobeFrames(ivf) {
            XCTAssertEqual(probe.count, decoded.count, "ffprobe decodes every frame", file: file, line: line)
            XCTAssertEqual(probe.errors, "", file: file, line: line)
        }

        // IVF pts are capture times since the first frame; the replay keeps the dump's spacing, so the
        // IVF frames before the next change (less a 100 ms margin) show the stretch. A refinement or repeat
        // carries its re-encode time, which on a loaded machine can land inside the next stretch's window,
        // so each frame is first attributed to the nearest (by PSNR) of this change and its neighbours, and
        // the stretch's end is the last frame in its window attributed to this change.
        func nearestChange(_ picture: I420Buffer, around position: Int) -> Int? {
            changes[max(0, position - 1)...min(changes.count - 1, position + 1)]
                .compactMap { index in expected[index].map { (index: index, picture: $0) } }
                .filter { $0.picture.width == picture.width && $0.picture.height == picture.height }
                .max { lumaPSNR(picture, $0.picture) < lumaPSNR(picture, $1.picture) }?.index
        }
        var results: [StretchResult] = []
        for end in ends {
            let position = changes.firstIndex(of: end.index)!
            let limit = end.until.map { $0 - 100_000 } ?? UInt64.max
            // Receive times may run a little ahead of the dump's spacing: 60 ms of slack before.
            let inWindow = decoded.filter { $0.micros + 60_000 >= times[end.index] && $0.micros <= limit }
            let shown = inWindow.last { frame in
                guard let nearest = nearestChange(frame.picture, around: position) else { return false }
                return nearest == end.index || frames[nearest].body == frames[end.index].body
                    && frames[nearest].header.rotation == frames[end.index].header.rotation
            }
            guard let candidate = shown ?? inWindow.last, let want = expected[end.index] else {
                XCTFail("no IVF frame for the stretch ending at frame \(end.index)", file: file, line: line)
                continue
            }
            XCTAssertEqual([candidate.picture.width, candidate.picture.height], [want.width, want.height],
                           "frame \(end.index)", file: file, line: line)
            guard candidate.picture.width == want.width, candidate.picture.height == want.height else { continue }
            let db = lumaPSNR(candidate.picture, want)
            XCTAssertGreaterThanOrEqual(db, 30, "PSNR at the end of the stretch ending with frame \(end.index)", file: file, line: line)
            results.append(StretchResult(frameIndex: end.index, expected: want, decoded: candidate.picture, psnr: db))
        }
        // Moving content gets no refinement time before the call exits, but the last picture must still
        // be the last frame's (a loose bar: 20 dB).
        var lastPSNR = Double.nan
        if let last = decoded.last, let want = expected.last(where: { $0 != nil }) ?? nil,
           last.picture.width == want.width, last.picture.height == want.height {
            lastPSNR = lumaPSNR(last.picture, want)
            XCTAssertGreaterThanOrEqual(lastPSNR, 20, "the last frame", file: file, line: line)
        }
        if ProcessInfo.processInfo.environment["CALLTESTS_VERBOSE"] != nil {
            for frame in decoded {
                let source = times.lastIndex { $0 <= frame.micros + 50_000 } ?? 0
                let want = expected[source]
                let db = want.map { $0.width == frame.picture.width && $0.height == frame.picture.height ? lumaPSNR(frame.picture, $0) : -1 } ?? -1
                print("  at \(frame.micros) µs key \(frame.keyframe) \(frame.picture.width)x\(frame.picture.height) source \(source) PSNR \(String(format: "%.1f", db))")
            }
        }
        print("round trip \(URL(fileURLWithPath: dumpPath).lastPathComponent): \(frames.count) frames, "
              + "\(decoded.count) encoded, PSNR at stretch ends \(results.map { String(format: "%.1f", $0.psnr) }), "
              + "last frame \(String(format: "%.1f", lastPSNR))")
        return results
    }

    func testAGeneratedDumpRoundTripsWithPSNRAbove30AtTheEndOfEachStretch() throws {
        // 4 stretches of 3 changes 100 ms apart, each then static for 1.4 s (a keepalive after 0.8 s).
        let (w, h) = (480, 272)
        let stretches = (0..<4).map { s in
            (pictures: (0..<3).map { makeDesktop(width: w, height: h, variant: s * 3 + $0) }, orientation: 1)
        }
        let results = try roundTrip(try stretchDump(stretches))
        XCTAssertEqual(results.count, 4)
    }

    /// Real captures, once the agent issue has committed them under Tests/Fixtures/.
    func testFixtureDumpsRoundTrip() throws {
        let fixtures = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures")
        let dumps = ((try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? [])
            .filter { $0.hasSuffix(".frames") }.sorted()
        guard !dumps.isEmpty else { throw XCTSkip("no Tests/Fixtures/*.frames yet (the agent issue records them)") }
        for dump in dumps {
            try roundTrip(fixtures.appendingPathComponent(dump).path)
            folder.remove()
            folder = try TemporaryDirectory(prefix: "call")
        }
    }

    func testOrientations6And8And3ComeOutRotatedWithTheSizeSwapped() throws {
        let (w, h) = (320, 180)
        let picture = makeDesktop(width: w, height: h, variant: 5)
        let results = try roundTrip(try stretchDump([1, 6, 8, 3].map { (pictures: [picture], orientation: $0) }))
        XCTAssertEqual(results.count, 4)
        guard results.count == 4 else { return }
        let sizes = results.map { "\($0.decoded.width)x\($0.decoded.height)" }
        XCTAssertEqual(sizes, ["320x180", "180x320", "180x320", "320x180"])
        // Each comes out turned the right way: far nearer its own rotation than the opposite one.
        for (result, (right, wrong)) in zip(results[1...], [(270, 90), (90, 270), (180, 0)]) {
            let rightDB = lumaPSNR(result.decoded, rotateClockwise(picture, degrees: right))
            let wrongDB = lumaPSNR(result.decoded, rotateClockwise(picture, degrees: wrong))
            XCTAssertGreaterThanOrEqual(rightDB, 30, "rotated \(right)°")
            XCTAssertLessThan(wrongDB, 20, "not rotated \(wrong)°")
        }
    }

    /// `screencast-agent --format i420` bodies: decoded-JPEG-range I420 used as is; VP8 frames come out with
    /// the pictures (rotations too), nearer the source than the JPEG path gets.
    func testI420DumpRoundTripsRotatedAndSharperThanJPEG() throws {
        let (w, h) = (320, 180)
        let picture = makeDesktop(width: w, height: h, variant: 7)
        let raw = try roundTrip(try stretchDump([1, 6, 3].map { (pictures: [picture], orientation: $0) }, format: .i420))
        XCTAssertEqual(raw.map { "\($0.decoded.width)x\($0.decoded.height)" }, ["320x180", "180x320", "320x180"])
        for (result, degrees) in zip(raw, [0, 270, 180]) {
            XCTAssertGreaterThanOrEqual(lumaPSNR(result.decoded, rotateClockwise(picture, degrees: degrees)), 30, "\(degrees)°")
        }
        folder.remove()
        folder = try TemporaryDirectory(prefix: "call")
        let jpeg = try roundTrip(try stretchDump([(pictures: [picture], orientation: 1)]))
        let rawDB = lumaPSNR(try XCTUnwrap(raw.first).decoded, picture)
        let jpegDB = lumaPSNR(try XCTUnwrap(jpeg.first).decoded, picture)
        print("I420 vs JPEG round trip, luma PSNR: \(rawDB) vs \(jpegDB)")
        XCTAssertGreaterThanOrEqual(rawDB, jpegDB - 0.5, "raw pictures are not worse than JPEG q90 ones")
    }

    /// A `Frame` that claims I420 with a body of the wrong size never reaches the encoder, and a stream
    /// that carries one is refused by the reader (`bodyLengthMismatch`); the call keeps serving.
    func testWrongI420LengthEndsThatSenderAndTheCallGoesOn() throws {
        let picture = makeDesktop(width: 64, height: 48, variant: 1)
        var bytes = try makeDump([DumpFrame(picture: picture, timestamp: 1_000_000, format: .i420)])
        let header = FrameHeader(contentLength: 0, bufferWidth: 64, bufferHeight: 48, timestampMicros: 1_100_000,
                                 sequence: 1, format: .i420)
        bytes += FrameEncoder.encode(header: header, body: Array(picture.bytes.dropLast()))
        let path = folder.path("bad.frames")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let call = try startCall(["--stats-interval", "0"])
        _ = try replay(path, socket: socket)
        XCTAssertNotNil(call.waitForLine("bodyLengthMismatch", timeout: 10), call.logText)
        // The call is still there and takes the next sender.
        let good = folder.path("good.frames")
        try Data(try makeDump([DumpFrame(picture: picture, timestamp: 1_000_000, format: .i420)])).write(to: URL(fileURLWithPath: good))
        let again = try replay(good, socket: socket)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertNotNil(call.waitForLine("screen sender ended", occurrence: 2, timeout: 10), call.logText)
        call.signal(SIGTERM)
        XCTAssertEqual(call.waitForExit(timeout: 10), 0, call.logText)
    }
}
