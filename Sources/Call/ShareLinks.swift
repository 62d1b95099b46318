import Foundation
import Glibc
public import Signaling
public import DTLS

/// `--share` and `--https`: the self-signed HTTPS identity, the fresh token, and the viewer links printed for
/// the sharer (one per address of this machine, since the page listens beyond loopback).
public enum ShareLinks {
    /// 24 random bytes as 32 base64url characters (RFC 4648 §5), never starting with "-": about 192 bits, safe in
    /// a URL query as it is and as a command-line value.
    public static func freshToken() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let token = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            // Never a leading "-": given back as `--token T` (ours, curl, argparse) it would read as an option.
            if token.first != "-" { return token }
        }
    }

    /// A new ECDSA P-256 key and self-signed certificate (`CN=screencast`, ±30 days) as PEM for the HTTPS server,
    /// with its SHA-256 fingerprint.
    /// - Throws: ``DTLSError`` when OpenSSL cannot make or encode them.
    public static func makeIdentity() throws(DTLSError) -> TLSIdentity {
        let certificate = try DTLSCertificate.generate(commonName: "screencast", validityDays: 30)
        return TLSIdentity(
            certificatePEM: try certificate.certificatePEM(), privateKeyPEM: try certificate.privateKeyPEM(),
            fingerprint: certificate.fingerprint.value)
    }

    /// The addresses viewers on other machines can use, from `getifaddrs`: for `0.0.0.0` every up, non-loopback
    /// IPv4 address; for `::` every such IPv6 address but link-local ones (the listener is IPv6-only,
    /// `IPV6_V6ONLY`, so an IPv4 link would not connect). When the server is bound to one address, only that one.
    public static func reachableHosts(boundTo host: String) -> [String] {
        if host != "0.0.0.0", host != "::" { return [host] }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var v4: [String] = []
        var v6: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0, let address = entry.pointee.ifa_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch Int32(address.pointee.sa_family) {
            case AF_INET where host == "0.0.0.0":  // a "::" listener is IPv6-only (IPV6_V6ONLY): no IPv4 link
                var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { continue }
                v4.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            case AF_INET6 where host == "::":
                var ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                guard inet_ntop(AF_INET6, &ipv6, &text, socklen_t(text.count)) != nil else { continue }
                let literal = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !literal.lowercased().hasPrefix("fe80") { v6.append("[\(literal)]") }
            default:
                continue
            }
        }
        return Array(Set(v4)).sorted() + Array(Set(v6)).sorted()
    }

    /// The lines printed at start: the links (token included), the stats link (`/stats?format=text`, on the first
    /// host, token included), the fingerprint, and what the browser will say.
    /// - Parameter certificateKept: the certificate was kept from an earlier run (the browser's exception for it
    ///   still holds), not made now.
    public static func banner(
        scheme: String, hosts: [String], port: UInt16, token: String?, fingerprint: String?, certificateKept: Bool = false
    ) -> String {
        let query = token.map { "/?token=\(SignalingServer.percentEncoded($0))" } ?? "/"
        // Bound to loopback (`--http 127.0.0.1:…`): the links work on this machine only, and the banner says so.
        let loopbackOnly = !hosts.isEmpty && hosts.allSatisfy { $0.hasPrefix("127.") || $0 == "::1" || $0 == "[::1]" }
        var lines = hosts.isEmpty
            ? ["", "  Sharing on this machine only (no address besides loopback). Viewer link:",
               "    \(scheme)://127.0.0.1:\(port)\(query)"]
            : loopbackOnly
            ? ["", "  Sharing on this machine only (the page is bound to loopback). Viewer link\(hosts.count == 1 ? "" : "s"):"]
            : ["", "  Sharing beyond this machine. Viewer link\(hosts.count == 1 ? "" : "s") (anyone with a link can watch):"]
        for host in hosts { lines.append("    \(scheme)://\(host):\(port)\(query)") }
        let statsQuery = "/stats?format=text" + (token.map { "&token=\(SignalingServer.percentEncoded($0))" } ?? "")
        lines.append("  Stats (who is watching, bitrate): \(scheme)://\(hosts.first ?? "127.0.0.1"):\(port)\(statsQuery)")
        if let fingerprint {
            lines.append("  HTTPS certificate (self-signed, \(certificateKept ? "kept from the last run" : "made now")) SHA-256:")
            lines.append("    \(fingerprint)")
            lines.append(certificateKept
                ? "  A browser that accepted it before goes on; one that has not warns once: compare the fingerprint."
                : "  The browser warns about it once: compare the fingerprint, then proceed.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A QR code of `link` for the terminal, from Debian's `qrencode` (`-t UTF8`), or nil when it is not installed
    /// or fails.
    public static func qrCode(_ link: String) -> String? {
        let tool = "/usr/bin/qrencode"
        guard FileManager.default.isExecutableFile(atPath: tool) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-t", "UTF8", "-m", "2", link]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, !data.isEmpty else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
