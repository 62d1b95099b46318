import Foundation
import Glibc
import TestSupport
import XCTest

/// An nginx with libnginx-mod-rtmp of the test's own (never the system service): a config in the test's
/// folder, no http block, on a free loopback port, recording each publish to its own FLV (`record_unique`);
/// killed and restarted by PID.
final class RTMPServer {
    let folder: String
    let port: Int
    private var process: Process?

    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")
            && FileManager.default.fileExists(atPath: "/usr/lib/nginx/modules/ngx_rtmp_module.so")
    }

    init(folder: String) throws {
        self.folder = folder
        port = try Self.freePort()
        try FileManager.default.createDirectory(atPath: folder + "/logs", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/rec", withIntermediateDirectories: true)
        let config = """
            load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
            daemon off; master_process off; worker_processes 1;
            pid \(folder)/nginx.pid; error_log \(folder)/logs/error.log info;
            events { worker_connections 64; }
            rtmp { server { listen 127.0.0.1:\(port); chunk_size 4096;
              application live { live on; record all; record_path \(folder)/rec; record_unique on; record_suffix .flv; } } }
            """
        try config.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        try start()
    }

    /// rtmp://127.0.0.1:PORT/live/NAME
    func url(_ name: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(name)" }

    /// Starts nginx and waits until it accepts connections.
    func start() throws {
        process = try ProcessRunner.start(URL(fileURLWithPath: "/usr/sbin/nginx"), ["-p", folder, "-c", folder + "/nginx.conf"])
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if Self.accepts(port) { return }
            usleep(20_000)
        }
        XCTFail("nginx did not listen on \(port)")
    }

    /// SIGKILL, and wait for it to be gone.
    func kill() {
        guard let process else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = ProcessRunner.wait(for: process, timeout: 5)
        self.process = nil
    }

    /// SIGSTOP: the server stops reading (its sockets' buffers fill); ``resume()`` sends SIGCONT.
    func pause() { if let process { Glibc.kill(process.processIdentifier, SIGSTOP) } }
    func resume() { if let process { Glibc.kill(process.processIdentifier, SIGCONT) } }

    /// Stops it (SIGQUIT: recordings closed) and waits.
    func stop() {
        guard let process else { return }
        Glibc.kill(process.processIdentifier, SIGQUIT)
        if ProcessRunner.wait(for: process, timeout: 5) { Glibc.kill(process.processIdentifier, SIGKILL) }
        self.process = nil
    }

    deinit { kill() }

    /// The recordings, oldest first.
    var recordings: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/rec")) ?? []
        return names.filter { $0.hasSuffix(".flv") }.map { folder + "/rec/" + $0 }.sorted {
            let a = (try? FileManager.default.attributesOfItem(atPath: $0)[.creationDate] as? Date) ?? nil
            let b = (try? FileManager.default.attributesOfItem(atPath: $1)[.creationDate] as? Date) ?? nil
            return (a ?? .distantPast, $0) < (b ?? .distantPast, $1)
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw NSError(domain: "port", code: 1) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// ffprobe and ffmpeg on a recording.
enum Probe {
    static func run(_ tool: String, _ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/" + tool), arguments, timeout: 60)
    }

    /// Codec, width, height of the first video stream; the container's duration.
    static func stream(_ path: String) throws -> (codec: String, width: Int, height: Int, duration: Double) {
        let out = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height:format=duration",
                                      "-of", "default=noprint_wrappers=1", path]).stdout
        var fields: [String: String] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return (fields["codec_name"] ?? "-", Int(fields["width"] ?? "") ?? 0, Int(fields["height"] ?? "") ?? 0, Double(fields["duration"] ?? "") ?? 0)
    }

    /// One stream of a file as ffprobe reads it.
    struct StreamInfo: Equatable {
        var type: String
        var codec: String
        var sampleRate: Int
        var channels: Int
        var startTime: Double
    }

    /// Every stream of the file, in order.
    static func streams(_ path: String) throws -> [StreamInfo] {
        let out = try run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,codec_name,sample_rate,channels,start_time",
                                      "-of", "json", path]).stdout
        let json = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
        let list = json?["streams"] as? [[String: Any]] ?? []
        return list.map { f in
            StreamInfo(
                type: f["codec_type"] as? String ?? "-", codec: f["codec_name"] as? String ?? "-",
                sampleRate: Int(f["sample_rate"] as? String ?? "") ?? 0, channels: f["channels"] as? Int ?? 0,
                startTime: Double(f["start_time"] as? String ?? "") ?? -1)
        }
    }

    /// The first audio stream decoded by ffmpeg: 48 kHz stereo S16 interleaved, from `from` seconds on.
    static func audio(_ path: String, from seconds: Double = 0) throws -> [Int16] {
        let out = folderFile()
        defer { try? FileManager.default.removeItem(atPath: out) }
        _ = try run("ffmpeg", ["-v", "error", "-y", "-i", path, "-ss", String(seconds), "-map", "0:a:0", "-f", "s16le", "-ac", "2", "-ar", "48000", out])
        let data = FileManager.default.contents(atPath: out) ?? Data()
        return data.withUnsafeBytes { raw in (0..<(data.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) } }
    }

    /// The size in bytes of every packet of the first audio stream, in order (as stored: no decoding).
    static func audioPacketSizes(_ path: String) throws -> [Int] {
        let out = try run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=size", "-of", "csv=p=0", path]).stdout
        return out.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Every packet's pts in seconds, of all streams, in file order.
    static func packetTimes(_ path: String) throws -> [Double] {
        let out = try run("ffprobe", ["-v", "error", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path]).stdout
        return out.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Every video frame's (keyframe, pts seconds), in order.
    static func frames(_ path: String) throws -> [(key: Bool, pts: Double)] {
        let out = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=key_frame,pts_time", "-of", "csv=p=0", path]).stdout
        return out.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: ",")
            guard parts.count >= 2, let pts = Double(parts[1]) else { return nil }
            return (parts[0] == "1", pts)
        }
    }

    /// `ffmpeg -v error` decoding every frame of the file: its error output (empty when clean). The null
    /// output keeps the stream's own time base (`-enc_time_base -1`): at ffmpeg's default, 1/fps, two frames of
    /// a variable-rate capture 15 ms apart round to one tick, and the null muxer complains of its own rounding.
    static func decodeErrors(_ path: String) throws -> String {
        try run("ffmpeg", ["-v", "error", "-i", path, "-enc_time_base", "-1", "-f", "null", "-"]).stderr
    }

    /// The picture at `seconds` as I420 bytes (yuv420p, the file's size).
    static func picture(_ path: String, at seconds: Double) throws -> [UInt8] {
        let out = folderFile()
        defer { try? FileManager.default.removeItem(atPath: out) }
        _ = try run("ffmpeg", ["-v", "error", "-y", "-ss", String(seconds), "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", out])
        return [UInt8](FileManager.default.contents(atPath: out) ?? Data())
    }

    /// The 320x240 test pattern's colour bars (below its moving box) in `picture` (I420), within 6 levels of
    /// the pattern's own BT.601 limited-range codes.
    static func assertPatternBars(_ picture: [UInt8], _ what: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(picture.count, 320 * 240 * 3 / 2, what, file: file, line: line)
        guard picture.count == 320 * 240 * 3 / 2 else { return }
        let bars: [(UInt8, UInt8, UInt8)] = [
            (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34), (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128),
        ]
        for (index, bar) in bars.enumerated() {
            let x = index * 40 + 16
            var (y, u, v) = (0, 0, 0)
            for row in 160..<168 { for col in x..<(x + 8) { y += Int(picture[row * 320 + col]) } }
            for row in 80..<84 {
                for col in (x / 2)..<(x / 2 + 4) {
                    u += Int(picture[320 * 240 + row * 160 + col])
                    v += Int(picture[320 * 240 + 160 * 120 + row * 160 + col])
                }
            }
            XCTAssertEqual(Double(y) / 64, Double(bar.0), accuracy: 6, "\(what) bar \(index) Y", file: file, line: line)
            XCTAssertEqual(Double(u) / 16, Double(bar.1), accuracy: 6, "\(what) bar \(index) Cb", file: file, line: line)
            XCTAssertEqual(Double(v) / 16, Double(bar.2), accuracy: 6, "\(what) bar \(index) Cr", file: file, line: line)
        }
    }

    private static func folderFile() -> String { NSTemporaryDirectory() + "probe-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yuv" }
}
