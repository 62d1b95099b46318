import Foundation
import DTLS
import SDP
import SRTP
import TestSupport
import XCTest

/// Our self-signed certificate and fingerprints (RFC 8122 §5, RFC 8827 §6.5).
final class DTLSCertificateTests: XCTestCase {
    func testFingerprintIsUpperCaseSHA256HexPairs() throws {
        let certificate = try DTLSCertificate.generate()
        let fingerprint = certificate.fingerprint
        XCTAssertEqual(fingerprint.algorithm, "sha-256")
        let pairs = fingerprint.value.split(separator: ":")
        XCTAssertEqual(pairs.count, 32)
        XCTAssertTrue(pairs.allSatisfy { $0.count == 2 && $0.allSatisfy { "0123456789ABCDEF".contains($0) } }, fingerprint.value)
        XCTAssertTrue(fingerprint.sdpValue.hasPrefix("sha-256 "))
        XCTAssertEqual(try Fingerprint(sdpValue: fingerprint.sdpValue), fingerprint)
        XCTAssertEqual(certificate.fingerprint(algorithm: "sha-256"), fingerprint)
        XCTAssertEqual(certificate.fingerprint(algorithm: "sha-512")?.digest?.count, 64)
        XCTAssertNil(certificate.fingerprint(algorithm: "md5"))
        XCTAssertNotEqual(try DTLSCertificate.generate().fingerprint, fingerprint, "a new key and certificate each time")
    }

    func testRemoteFingerprintsCompareWithoutRegardToCase() throws {
        // Digests as long as their hash function's (RFC 8122 §5: 32 bytes for sha-256, 20 for sha-1).
        let rest = String(repeating: ":00", count: 28)
        let upper = try Fingerprint(sdpValue: "sha-256 AB:CD:EF:01" + rest)
        let lower = try Fingerprint(sdpValue: "SHA-256 ab:cd:ef:01" + rest)
        XCTAssertEqual(lower.algorithm, "sha-256")
        XCTAssertTrue(upper.matches(lower))
        XCTAssertFalse(upper.matches(try Fingerprint(sdpValue: "sha-256 AB:CD:EF:02" + rest)))
        XCTAssertFalse(upper.matches(try Fingerprint(sdpValue: "sha-1 AB:CD:EF:01" + String(repeating: ":00", count: 16))), "another hash function")
        for bad in ["sha-256", "sha-256 ABCD", "sha-256 AB:C", "sha-256 AB::CD", "sha-256 XY:00", " sha-256 AB", "sha-256 AB:CD:EF:01"] {
            XCTAssertThrowsError(try Fingerprint(sdpValue: bad), bad)
        }
    }

    func testSharedCertificateIsMadeOnce() throws {
        let first = try DTLSCertificate.shared()
        let second = try DTLSCertificate.shared()
        XCTAssertTrue(first === second)
    }

    func testRefusesBadParameters() {
        XCTAssertThrowsError(try DTLSCertificate.generate(validityDays: 0))
        XCTAssertThrowsError(try DTLSCertificate.generate(commonName: ""))
    }

    /// OpenSSL's command line reads it back: X.509 v3, ECDSA P-256 signed with SHA-256, self-issued, valid
    /// from about 30 days ago for about 60 days.
    func testCertificateParsesAsSelfSignedECDSAP256() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("no /usr/bin/openssl") }
        let certificate = try DTLSCertificate.generate(commonName: "screencast-test")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-cert-\(UUID().uuidString).der")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(certificate.der).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["x509", "-inform", "der", "-in", file.path, "-noout", "-text", "-fingerprint", "-sha256", "-dates"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let text = String(decoding: POSIXPipeRead.toEnd(pipe.fileHandleForReading.fileDescriptor), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("Version: 3 (0x2)"), text)
        XCTAssertTrue(text.contains("Signature Algorithm: ecdsa-with-SHA256"), text)
        XCTAssertTrue(text.contains("NIST CURVE: P-256"), text)
        XCTAssertTrue(text.contains("Issuer: CN = screencast-test") && text.contains("Subject: CN = screencast-test"), text)
        XCTAssertTrue(text.contains("sha256 Fingerprint=" + certificate.fingerprint.value), text)

        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        func date(after marker: String) throws -> Date {
            let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix(marker) })
            let value = line.dropFirst(marker.count).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            return try XCTUnwrap(formatter.date(from: value), value)
        }
        let day = 86_400.0
        XCTAssertEqual(try date(after: "notBefore=").timeIntervalSinceNow, -30 * day, accuracy: 120)
        XCTAssertEqual(try date(after: "notAfter=").timeIntervalSinceNow, 30 * day, accuracy: 120)
    }
}
