import Foundation
import Glibc

/// A PulseAudio server of the test's own (/work/shared/notes/sound-and-rtmp.md): `pulseaudio -n` with only
/// the native protocol and a null sink `share` as the default sink, in a runtime folder of its own, and a
/// 1000 Hz sine at -9 dBFS RMS (sox `vol 0.5`) played into that sink in a loop. Stopped by PID.
public final class PulseServer {
    public let folder: TemporaryDirectory
    public let socketPath: String
    /// The daemon's process id (from its pid file): `pulseaudio --daemonize=yes`, because pulseaudio closes every
    /// inherited descriptor at start, which a Foundation `Process` takes for its exit and then blocks its one
    /// monitoring thread in `waitpid` on it, so no other child's exit was seen until the server stopped.
    private var server: Int32?
    private var player: Process?
    /// XDG_RUNTIME_DIR before this server, put back by ``stop()`` (later tests in this process read it: the
    /// default socket path in the tools' help, which grew past 100 columns with this one's folder).
    private var savedRuntimeDir: String?

    /// Starts the server and the tone; throws when a tool is missing (`tools/setup` installs them) or the
    /// server does not answer in 10 s.
    public init() throws {
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
        let started = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/pulseaudio"), [
            "--daemonize=yes", "--exit-idle-time=-1", "-n", "--load=module-native-protocol-unix",
            "--load=module-null-sink sink_name=share",
        ], timeout: 10)
        guard started.status == 0, let text = try? String(contentsOfFile: runtime + "/pulse/pid", encoding: .utf8),
              let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw NSError(domain: "PulseServer", code: 2, userInfo: [NSLocalizedDescriptionKey: "pulseaudio did not start: \(started.stderr)"])
        }
        server = pid
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
    public var serverPID: Int32? { server }

    public func stop() {
        if let player, ProcessRunner.isRunning(player) {
            kill(player.processIdentifier, SIGTERM)
            _ = ProcessRunner.wait(for: player, timeout: 5)
        }
        if let server {
            kill(server, SIGCONT)
            kill(server, SIGTERM)
            for _ in 0..<100 where kill(server, 0) == 0 { usleep(50_000) }  // not our child: gone once init reaps it
        }
        player = nil
        server = nil
        unsetenv("PULSE_SERVER")
        if let savedRuntimeDir { setenv("XDG_RUNTIME_DIR", savedRuntimeDir, 1) } else { unsetenv("XDG_RUNTIME_DIR") }
        folder.remove()
    }

    deinit { stop() }
}

/// Sound measured: frequency by zero crossings, level as RMS dBFS.
public enum SoundMeasure {
    /// Channel `channel`'s frequency in Hz from its upward zero crossings (first to last crossing).
    public static func frequency(_ samples: [Int16], channels: Int, channel: Int = 0, rate: Int) -> Double {
        var crossings: [Double] = []
        var previous = Int(samples[channel])
        var index = channel + channels
        var frame = 1
        while index < samples.count {
            let value = Int(samples[index])
            if previous < 0, value >= 0 {
                crossings.append(Double(frame - 1) + Double(-previous) / Double(value - previous))
            }
            previous = value
            index += channels
            frame += 1
        }
        guard crossings.count >= 2 else { return 0 }
        return Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / Double(rate))
    }

    public static func rmsDBFS(_ samples: [Int16]) -> Double {
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 20 * log10((sum / Double(max(1, samples.count))).squareRoot() / 32768)
    }
}
