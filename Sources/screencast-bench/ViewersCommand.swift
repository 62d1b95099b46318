import Foundation
import Glibc
import ScreencastSupport
import DTLS
import Publishing
import ICE
import SDP

/// `screencast-bench viewers`: N ``LightViewer``s watch a call for a while, then leave; prints one JSON
/// object `{"viewers": [...], "connected": N}` on stdout. Progress goes to stderr.
enum ViewersCommand {
    static let usage = """
        Usage: screencast-bench viewers --url URL [--token T] [--count N] [--seconds S]

        Light WHEP viewers for fan-out measurements: each completes ICE and DTLS with the call, then counts
        and drops the SRTP it receives (no decryption, no decoding; an empty RTCP receiver report a second,
        which keeps its consent with the call). Loopback only (127.0.0.1):
        its ICE candidates are on 127.0.0.1, so the call needs `--ice-address 127.0.0.1` too.

          --url URL      the call's WHEP endpoint, http://127.0.0.1:PORT/whep or https://… (a call with
                         --https or --share: its self-signed certificate is not checked, on loopback)
          --token T      the call's token (--token, or the one --share printed)
          --count N      viewers, 1-256 (default 1)
          --seconds S    how long to stay after joining (default 10)

        Exit codes: 0 every viewer connected; 1 not every one did (at once, without waiting out --seconds,
        when every viewer's join failed: the reason on stderr); 64 bad usage.
        """

    static func run(_ words: [String]) throws -> Int32 {
        let arguments = try CommandLineArguments(words, options: ["url", "token", "count", "seconds"], flags: ["help"])
        if arguments.has("help") { print(usage); return 0 }
        guard let url = arguments.string("url") else { throw UsageError("viewers needs --url") }
        let count = try arguments.int("count", in: 1...256) ?? 1
        let seconds = try arguments.double("seconds", in: 0...86_400) ?? 10
        let client: WHEPClient
        do { client = try WHEPClient(url: url, token: arguments.string("token")) } catch let error as BenchError { throw UsageError("--url: \(error)") }
        guard client.host == "127.0.0.1" else { throw UsageError("viewers connect to 127.0.0.1 only") }
        let certificate = try DTLSCertificate.shared()
        let viewers = (0..<count).map { LightViewer(index: $0) }
        var errors: [Int: String] = [:]
        for viewer in viewers {
            do { try viewer.join(client: client, certificate: certificate) } catch { errors[viewer.index] = "join: \(error)" }
        }
        let connected: Int
        if errors.count == count {
            // No viewer can connect: waiting out --seconds (and the 20 s for ICE) would measure nothing.
            var reasons: [String] = []
            for (_, reason) in errors.sorted(by: { $0.key < $1.key }) where !reasons.contains(reason) { reasons.append(reason) }
            connected = 0
            FileHandle.standardError.write(Data((
                "viewers: every join failed (\(count) of \(count)): \(reasons.prefix(3).joined(separator: "; "))"
                    + (reasons.count > 3 ? " (and \(reasons.count - 3) other reasons)" : "") + "\n").utf8))
        } else {
            connected = watch(viewers, errors: errors, seconds: seconds)
        }
        for viewer in viewers { viewer.leave(client: client) }
        let reports = viewers.map { viewer -> JSONValue in
            guard let error = errors[viewer.index], case .object(var fields) = viewer.report else { return viewer.report }
            fields.append(("joinError", .string(error)))
            return .object(fields)
        }
        print(JSONValue.object([("connected", .number(connected)), ("viewers", .array(reports))]).serialized)
        return connected == count ? 0 : 1
    }

    /// Waits up to 20 s for the viewers that joined to connect (ICE and DTLS), says how many did, then stays
    /// `seconds` seconds. Returns how many had connected by the end of the 20 s.
    private static func watch(_ viewers: [LightViewer], errors: [Int: String], seconds: Double) -> Int {
        let count = viewers.count
        let deadline = MonotonicClock.nowMicros() + 20_000_000
        while viewers.contains(where: { !$0.isConnected && errors[$0.index] == nil }), MonotonicClock.nowMicros() < deadline {
            usleep(20_000)
        }
        let connected = viewers.filter(\.isConnected).count
        FileHandle.standardError.write(Data("viewers: \(connected) of \(count) connected\n".utf8))
        let unanswered = viewers.filter { !$0.isConnected && errors[$0.index] == nil }.count
        if unanswered > 0 {
            // The usual cause on one machine: a call without --ice-address 127.0.0.1 offers no loopback candidate.
            FileHandle.standardError.write(Data((
                "viewers: \(unanswered) joined but never connected within 20 s (ICE or DTLS did not complete); "
                    + "a call on this machine needs --ice-address 127.0.0.1 to offer a loopback candidate\n").utf8))
        }
        usleep(useconds_t(seconds * 1e6))
        return connected
    }
}
