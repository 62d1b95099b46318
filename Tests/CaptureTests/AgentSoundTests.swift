import Capture
import Foundation
import FrameSocket
import FrameWire
import Glibc
import ScreencastSupport
import Synchronization
import TestSupport
import XCTest
import XTestSupport

/// A PulseAudio server of the test's own (/work/shared/notes/sound-and-rtmp.md): `pulseaudio -n` with only
/// the native protocol and a null sink `share` as the default sink, in a runtime folder of its own, and a
/// 1000 Hz sine at -9 dBFS RMS (sox `vol 0.5`) played into that sink in a loop. Stopped by PID.
final class PulseServer {
    let folder: TemporaryDirectory
    let socketPath: String
    private var server: Process?
    private var player: Process?
    /// XDG_RUNTIME_DIR before this server, put back by ``stop()`` (later tests in this process read it: the
    /// default socket path in the tools' help, which grew past 100 columns with this one's folder).
    private var savedRuntimeDir: String?

    init() throws {
        folder = try TemporaryDirectory(prefix: "sc-pulse")
        let runtime = folder.path("run")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        socketPath = runtime + "/pulse/native"
        for tool in ["pulseaudio", "pactl", "paplay", "sox"] {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) else {
                throw NSError(domain: "PulseServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "/usr/bin/\(tool) missing: run tools/setup"])
            }
        }
        savedRuntimeDir = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
        setenv("XDG_RUNTIME_DIR", runtime, 1)  // pulseaudio, pactl, paplay and the agent (children) find it there
        setenv("PULSE_SERVER", "unix:" + socketPath, 1)
        server = try ProcessRunner.start(URL(fileURLWithPath: "/usr/bin/pulseaudio"), [
            "--daemonize=no", "--exit-idle-time=-1", "-n", "--load=module-native-protocol-unix",
            "--load=module-null-sink sink_name=share",
        ], stdout: nil, stderr: nil)
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/pactl"), ["info"], timeout: 5))?.status == 0
            if !ready { usleep(100_000) }
        }
        guard ready else { throw NSError(domain: "PulseServer", code: 2, userInfo: [NSLocalizedDescriptionKey: "pulseaudio did not answer in 10 s"]) }
        _ = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/pactl"), ["set-default-sink", "share"], timeout: 5)
        let tone = folder.path("tone.wav")
        let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/sox"),
                                         ["-n", "-r", "48000", "-c", "2", "-b", "16", tone, "synth", "60", "sine", "1000", "vol", "0.5"], timeout: 30)
        guard made.status == 0 else { throw NSError(domain: "PulseServer", code: 3, userInfo: [NSLocalizedDescriptionKey: made.stderr]) }
        player = try ProcessRunner.start(URL(fileURLWithPath: "/usr/bin/paplay"), [tone], stdout: nil, stderr: nil)
    }

    /// The sound server's process id (to freeze it with SIGSTOP: a server that no longer answers).
    var serverPID: Int32? { server?.processIdentifier }

    func stop() {
        if let server { kill(server.processIdentifier, SIGCONT) }
        for process in [player, server].compactMap({ $0 }) where ProcessRunner.isRunning(process) {
            kill(process.processIdentifier, SIGTERM)
            _ = ProcessRunner.wait(for: process, timeout: 5)
        }
        player = nil
        server = nil
        unsetenv("PULSE_SERVER")
        if let savedRuntimeDir { setenv("XDG_RUNTIME_DIR", savedRuntimeDir, 1) } else { unsetenv("XDG_RUNTIME_DIR") }
        folder.remove()
    }

    deinit { stop() }
}

/// `screencast-agent --audio system` for real: a PulseAudio server of the test's own plays a 1 kHz tone
/// into its default sink; the agent captures the sink's monitor and sends sound messages beside the
/// pictures over the socket to a real ``FrameServer``.
final class AgentSoundTests: XServerTestCase {
    override var timeLimit: Double { 120 }

    func testSystemSoundCrossesTheSocketAsTheTonePlayed() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let folder = try TemporaryDirectory(prefix: "sc-sound")
        defer { folder.remove() }
        let path = try SocketPath(folder.path("agent.sock"))
        struct Received { var frames: [Frame] = []; var sounds: [SoundMessage] = []; var order: [String] = [] }
        let received = Mutex(Received())
        let reader = FrameServer(path: path, logger: Logger(component: "server", threshold: .warning)) { event in
            switch event {
            case .frame(let frame, _): received.withLock { $0.frames.append(frame); $0.order.append("picture") }
            case .sound(let sound, _): received.withLock { $0.sounds.append(sound); $0.order.append("sound") }
            default: break
            }
        }
        try reader.start()
        defer { reader.stop() }
        let result = try ProcessRunner.run(
            TestPaths.executable("screencast-agent"),
            ["--display", server.display, "--socket", path.string, "--audio", "system", "--duration", "5", "--keepalive", "0.2"],
            timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("sound on source=system"), result.stderr)
        Thread.sleep(forTimeInterval: 0.3)
        let got = received.withLock { $0 }
        print("sound: \(got.sounds.count) messages, \(got.frames.count) pictures; agent: "
              + (result.stderr.split(separator: "\n").last { $0.contains("sound summary") }.map(String.init) ?? "-"))

        // At least 1.5 s of sound in 10 ms messages of 48 kHz stereo s16le, of the agent's 5 s (the sound server's
        // stream may take a second or two to start on a loaded machine: 107 in 3 s was seen with five builds beside).
        XCTAssertGreaterThanOrEqual(got.sounds.count, 150)
        for sound in got.sounds {
            XCTAssertEqual(sound.header.rate, 48000)
            XCTAssertEqual(sound.header.channels, 2)
            XCTAssertEqual(sound.header.samples, 480)
            XCTAssertEqual(sound.header.source, "system")
        }
        // Interleaved with the pictures on the one socket, the pictures undisturbed.
        XCTAssertGreaterThanOrEqual(got.frames.count, 5, "keepalives every 0.2 s")
        XCTAssertTrue(got.order.firstIndex(of: "sound").map { got.order[$0...].contains("picture") } ?? false, "pictures after sound")

        // The tone: 1000 Hz within 3 Hz, -9 dBFS RMS within 1 dB (the first 0.2 s left out: the stream starts).
        let samples = got.sounds.dropFirst(20).flatMap(\.samples)
        let frequency = SoundMeasure.frequency(samples, channels: 2, rate: 48000)
        let level = SoundMeasure.rmsDBFS(samples)
        print(String(format: "sound: %.2f Hz, %.2f dBFS RMS over %d samples", frequency, level, samples.count / 2))
        XCTAssertEqual(frequency, 1000, accuracy: 3)
        XCTAssertEqual(level, -9.03, accuracy: 1)

        // Timestamps: 10 ms apart (± the clock's 0.1 ms corrections), monotonic, sequence without gaps, and
        // on the pictures' clock: within the run's span of picture timestamps (± 0.5 s).
        let stamps = got.sounds.map(\.header.timestampMicros)
        let gaps = zip(stamps, stamps.dropFirst()).map { Int64($1) - Int64($0) }
        XCTAssertTrue(gaps.allSatisfy { (9_800...10_200).contains($0) }, "gaps \(gaps.min() ?? 0)…\(gaps.max() ?? 0) µs")
        XCTAssertEqual(got.sounds.compactMap(\.header.sequence), (0..<UInt64(got.sounds.count)).map { $0 })
        let pictureStamps = got.frames.compactMap(\.header.timestampMicros)
        let first = try XCTUnwrap(pictureStamps.min()), last = try XCTUnwrap(pictureStamps.max())
        XCTAssertGreaterThan(stamps.first!, first - 500_000)
        XCTAssertLessThan(stamps.last!, last + 500_000)
        // The last sound was played no later than it was received (stamps are when it was played, not read).
        XCTAssertLessThanOrEqual(stamps.last!, MonotonicClock.nowMicros())
    }

    /// A sound server that stops answering mid-share (SIGSTOPped) leaves the agent's reader blocked in
    /// `pa_simple_read`, which has no timeout: the agent still ends at its `--duration` (it ran until the server
    /// answered again, 14 s for a 5-s run, in a bad-input trial).
    func testASoundServerThatStopsAnsweringDoesNotHoldTheAgent() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let folder = try TemporaryDirectory(prefix: "sc-stuck")
        defer { folder.remove() }
        let agent = try ProcessRunner.start(
            TestPaths.executable("screencast-agent"),
            ["--display", server.display, "--output", folder.path("a.frames"), "--audio", "system", "--duration", "3", "--keepalive", "0.2"],
            stdout: nil, stderr: nil)
        let started = Date()
        usleep(1_500_000)
        let pid = try XCTUnwrap(pulse.serverPID)
        XCTAssertEqual(kill(pid, SIGSTOP), 0)
        defer { kill(pid, SIGCONT) }
        XCTAssertFalse(ProcessRunner.wait(for: agent, timeout: 15), "the agent ended by itself")
        let took = Date().timeIntervalSince(started)
        print("sound: a stuck sound server; the agent's 3-s run ended after \(String(format: "%.1f", took)) s")
        XCTAssertLessThan(took, 8, "at its duration plus the 1-s wait for the reader (5.0 s measured)")
        XCTAssertEqual(ProcessRunner.status(of: agent), 0)
    }

    func testNoSoundServerSharesThePictureAlone() throws {
        let folder = try TemporaryDirectory(prefix: "sc-nosound")
        defer { folder.remove() }
        setenv("PULSE_SERVER", "unix:" + folder.path("nobody-here"), 1)
        defer { unsetenv("PULSE_SERVER") }
        let result = try ProcessRunner.run(
            TestPaths.executable("screencast-agent"),
            ["--display", server.display, "--output", folder.path("a.frames"), "--audio", "system", "--frames", "2", "--keepalive", "0.1"],
            timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("warn agent no sound: sharing the picture alone"), result.stderr)
        let (frames, end) = try DumpReader.frames(folder.path("a.frames"))
        XCTAssertEqual(frames.count, 2)
        XCTAssertEqual(end, .eof)
    }
}
