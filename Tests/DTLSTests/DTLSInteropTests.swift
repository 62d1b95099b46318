import Foundation
import Synchronization
import DTLS
import SDP
import SRTP
import TestSupport
import XCTest

/// Our endpoint against other DTLS implementations over real UDP on 127.0.0.1: OpenSSL's command-line
/// peers (`openssl s_server` / `s_client`: another driver, the socket BIO, a HelloVerifyRequest cookie
/// exchange) and GnuTLS (`gnutls-cli`, a different TLS stack; skipped when not installed, and only
/// AES128_CM_HMAC_SHA1_80 since GnuTLS 3.7 lacks the AEAD profile). Each prints the keying material it
/// exported with `EXTRACTOR-dtls_srtp`; ours, laid out per RFC 5764 §4.2, must equal it byte for byte.
final class DTLSInteropTests: XCTestCase {
    private var directory: URL!
    private var processes: [Process] = []
    /// The peers' output pipes, whose readability handlers are cleared in tearDown (a handler left set keeps
    /// its pipe, its dispatch source and the collector alive for the rest of the test process).
    private var pipes: [Pipe] = []

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("no /usr/bin/openssl") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let made = try Self.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=interop", "-keyout", path("key.pem"), "-out", path("cert.pem"),
        ])
        XCTAssertEqual(made.status, 0, made.output)
    }

    override func tearDown() {
        for process in processes where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        for pipe in pipes { pipe.fileHandleForReading.readabilityHandler = nil }
        pipes = []
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func testOurClientAgainstOpenSSLServer() throws {
        let port = try UDPSocket.freePort()
        let server = try start("/usr/bin/openssl", [
            "s_server", "-dtls1_2", "-accept", "127.0.0.1:\(port)", "-cert", path("cert.pem"), "-key", path("key.pem"),
            "-use_srtp", "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80", "-verify", "1",
            "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "56",
        ])
        XCTAssertTrue(server.output.wait(for: "ACCEPT", seconds: 10), server.output.text)
        let endpoint = try DTLSEndpoint(configuration: DTLSConfiguration(
            role: .client, certificate: DTLSCertificate.generate(), remoteFingerprints: [try opensslFingerprint()]))
        let socket = try UDPSocket()
        try drive(endpoint, over: socket, peerPort: port)
        let keys = try XCTUnwrap(endpoint.keyingMaterial, "\(endpoint.state)\n\(server.output.text)")
        XCTAssertEqual(keys.profile, .aeadAES128GCM)
        XCTAssertTrue(server.output.wait(for: "Keying material: ", seconds: 5), server.output.text)
        XCTAssertEqual(Self.hex(exportOf: keys), try XCTUnwrap(server.output.value(after: "Keying material: ")))
    }

    func testOurServerAgainstOpenSSLClient() throws {
        let socket = try UDPSocket()
        let certificate = try DTLSCertificate.generate()
        let client = try start("/usr/bin/openssl", [
            "s_client", "-dtls1_2", "-connect", "127.0.0.1:\(socket.port)", "-cert", path("cert.pem"), "-key", path("key.pem"),
            "-use_srtp", "SRTP_AES128_CM_SHA1_80:SRTP_AEAD_AES_128_GCM", "-mtu", "1200",
            "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "56",
        ])
        let endpoint = try DTLSEndpoint(configuration: DTLSConfiguration(
            role: .server, certificate: certificate, remoteFingerprints: [try opensslFingerprint()]))
        try drive(endpoint, over: socket, peerPort: nil)
        let keys = try XCTUnwrap(endpoint.keyingMaterial, "\(endpoint.state)\n\(client.output.text)")
        XCTAssertEqual(keys.profile, .aeadAES128GCM, "our (server) preference wins over the client's order")
        XCTAssertTrue(client.output.wait(for: "Keying material: ", seconds: 5), client.output.text)
        XCTAssertEqual(Self.hex(exportOf: keys), try XCTUnwrap(client.output.value(after: "Keying material: ")))
        // OpenSSL's command line computes our certificate's fingerprint the way we print it.
        try Data(certificate.der).write(to: directory.appendingPathComponent("ours.der"))
        let printed = try Self.run("/usr/bin/openssl", ["x509", "-inform", "der", "-in", path("ours.der"), "-noout", "-fingerprint", "-sha256"])
        XCTAssertEqual(printed.output.trimmingCharacters(in: .whitespacesAndNewlines), "sha256 Fingerprint=" + certificate.fingerprint.value)
    }

    func testOurServerAgainstGnuTLSClient() throws {
        let gnutls = "/usr/bin/gnutls-cli"
        guard FileManager.default.isExecutableFile(atPath: gnutls) else { throw XCTSkip("gnutls-cli not installed (Debian gnutls-bin)") }
        let socket = try UDPSocket()
        let client = try start(gnutls, [
            "--udp", "-p", "\(socket.port)", "--insecure", "--x509certfile=\(path("cert.pem"))",
            "--x509keyfile=\(path("key.pem"))", "--srtp-profiles=SRTP_AES128_CM_HMAC_SHA1_80", "--mtu=1200",
            "--keymatexport=EXTRACTOR-dtls_srtp", "--keymatexportsize=60", "127.0.0.1",
        ])
        let endpoint = try DTLSEndpoint(configuration: DTLSConfiguration(
            role: .server, certificate: DTLSCertificate.generate(), remoteFingerprints: [try opensslFingerprint()]))
        try drive(endpoint, over: socket, peerPort: nil)
        let keys = try XCTUnwrap(endpoint.keyingMaterial, "\(endpoint.state)\n\(client.output.text)")
        XCTAssertEqual(keys.profile, .aes128CMHMACSHA1_80)
        XCTAssertTrue(client.output.wait(for: "- Key material: ", seconds: 5), client.output.text)
        XCTAssertEqual(Self.hex(exportOf: keys), try XCTUnwrap(client.output.value(after: "- Key material: ")).uppercased())
    }

    // MARK: Helpers

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The test certificate's fingerprint as `openssl x509 -fingerprint -sha256` prints it.
    private func opensslFingerprint() throws -> Fingerprint {
        let printed = try Self.run("/usr/bin/openssl", ["x509", "-in", path("cert.pem"), "-noout", "-fingerprint", "-sha256"])
        let value = try XCTUnwrap(printed.output.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        return try Fingerprint(sdpValue: "sha-256 " + value)
    }

    /// Runs `endpoint` over `socket` until it is connected or ended (10 s at most). The peer's port is known
    /// (we are the client) or learnt from its first datagram.
    private func drive(_ endpoint: DTLSEndpoint, over socket: UDPSocket, peerPort: UInt16?) throws {
        var peer = peerPort
        let deadline = DTLSLink.now() + 10_000_000
        try endpoint.start(nowMicros: DTLSLink.now())
        while DTLSLink.now() < deadline {
            if let peer { for datagram in endpoint.takeDatagrams() { socket.send(datagram, to: peer) } }
            if endpoint.keyingMaterial != nil || endpoint.state.isTerminal { break }
            let now = DTLSLink.now()
            let wait = min(endpoint.nextTimeout.map { $0 > now ? $0 - now : 0 } ?? 100_000, 100_000)
            if let (datagram, from) = socket.receive(timeoutMicros: wait) {
                peer = peer ?? from
                try endpoint.receive(datagram, nowMicros: DTLSLink.now())
            } else {
                try endpoint.handleTimeout(nowMicros: DTLSLink.now())
            }
        }
        if let peer { for datagram in endpoint.takeDatagrams() { socket.send(datagram, to: peer) } }
    }

    static func hex(exportOf keys: SRTPKeyingMaterial) -> String {
        let bytes = keys.clientWrite.key + keys.serverWrite.key + keys.clientWrite.salt + keys.serverWrite.salt
        return bytes.map { String(format: "%02X", $0) }.joined()
    }

    private func start(_ executable: String, _ arguments: [String]) throws -> (process: Process, output: OutputCollector) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = OutputCollector()
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = Pipe()  // kept open: the peers wait for input instead of closing
        pipe.fileHandleForReading.readabilityHandler = { handle in output.append((POSIXPipeRead.chunk(handle.fileDescriptor) ?? Data())) }
        try process.run()
        processes.append(process)
        pipes.append(pipe)
        return (process, output)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = POSIXPipeRead.toEnd(pipe.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// A peer process's output, collected as it arrives.
final class OutputCollector: Sendable {
    private let data = Mutex(Data())

    func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits until the output contains `marker`.
    func wait(for marker: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if text.contains(marker) { return true }
            usleep(10_000)
        }
        return text.contains(marker)
    }

    /// The rest of the line after `marker`.
    func value(after marker: String) -> String? {
        guard let range = text.range(of: marker) else { return nil }
        return String(text[range.upperBound...].prefix { !$0.isNewline }).trimmingCharacters(in: .whitespaces)
    }
}

/// A UDP socket on 127.0.0.1 for interop tests.
final class UDPSocket {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    /// A port that was free a moment ago (for a peer process to bind).
    static func freePort() throws -> UInt16 { try UDPSocket().port }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    func send(_ datagram: [UInt8], to port: UInt16) {
        var address = Self.loopback(port: port)
        _ = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// One datagram and its sender's port, or nil after `timeoutMicros`.
    func receive(timeoutMicros: UInt64) -> ([UInt8], UInt16)? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeoutMicros / 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, bytes.baseAddress, bytes.count, 0, $0, &length) }
            }
        }
        guard count >= 0 else { return nil }
        return (Array(buffer.prefix(count)), UInt16(bigEndian: address.sin_port))
    }
}
