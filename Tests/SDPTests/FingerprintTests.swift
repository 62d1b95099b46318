import SDP
import XCTest

/// ``Fingerprint`` (RFC 8122 §5): the digest it names, comparison without regard to case, and which of a
/// peer's fingerprints to check (the strongest hash function we support).
final class FingerprintTests: XCTestCase {
    func testDigestBytesAndTheirText() throws {
        let fingerprint = Fingerprint(algorithm: "SHA-256", digest: [0x00, 0x0F, 0xA0, 0xFF])
        XCTAssertEqual(fingerprint.algorithm, "sha-256", "hash names are lowercased")
        XCTAssertEqual(fingerprint.value, "00:0F:A0:FF", "upper-case hex pairs")
        XCTAssertEqual(fingerprint.sdpValue, "sha-256 00:0F:A0:FF")
        XCTAssertEqual(fingerprint.digest, [0x00, 0x0F, 0xA0, 0xFF])
        XCTAssertEqual(Fingerprint(algorithm: "sha-1", value: "ab:CD").digest, [0xAB, 0xCD])
        for bad in ["", "AB:", ":AB", "ABC", "A:BC", "AB:CG", "AB CD", "AB::CD"] {
            XCTAssertNil(Fingerprint(algorithm: "sha-256", value: bad).digest, bad)
        }
        XCTAssertEqual(try Fingerprint(sdpValue: "SHA-384 de:AD:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00"), Fingerprint(algorithm: "sha-384", value: "de:AD:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00"))
        assertThrowsSDPError(try Fingerprint(sdpValue: "sha-256"),
                             .badAttribute(line: 0, name: "fingerprint", reason: "expected '<hash> <hex:hex:…>'"))
        assertThrowsSDPError(try Fingerprint(sdpValue: "sha-256 xy"),
                             .badAttribute(line: 0, name: "fingerprint", reason: "value is not colon-separated hex pairs"))
    }

    /// RFC 8122 §5 lets either case be used: the same hash function and bytes match.
    func testMatchingIgnoresCase() {
        let upper = Fingerprint(algorithm: "sha-256", value: "AB:CD:EF")
        XCTAssertTrue(upper.matches(Fingerprint(algorithm: "SHA-256", value: "ab:cd:ef")))
        XCTAssertFalse(upper.matches(Fingerprint(algorithm: "sha-256", value: "AB:CD:EE")))
        XCTAssertFalse(upper.matches(Fingerprint(algorithm: "sha-384", value: "AB:CD:EF")), "another hash function")
        XCTAssertFalse(upper.matches(Fingerprint(algorithm: "sha-256", value: "AB:CD")))
        XCTAssertFalse(Fingerprint(algorithm: "sha-256", value: "zz").matches(Fingerprint(algorithm: "sha-256", value: "zz")),
                       "a malformed value matches nothing, not even itself")
    }

    /// Of several, those of the strongest supported function are checked (all of them: a peer may name
    /// several certificates); unknown functions and malformed values are left out.
    func testTheStrongestSupportedAreChosen() {
        XCTAssertEqual(["sha-1", "sha-224", "sha-256", "sha-384", "sha-512", "md5", "SHA-512"].map {
            Fingerprint(algorithm: $0, value: "00").strength
        }, [1, 2, 3, 4, 5, nil, 5])
        let sha1 = Fingerprint(algorithm: "sha-1", value: "01")
        let sha256a = Fingerprint(algorithm: "sha-256", value: "02")
        let sha256b = Fingerprint(algorithm: "sha-256", value: "03")
        let broken512 = Fingerprint(algorithm: "sha-512", value: "nothex")
        let md5 = Fingerprint(algorithm: "md5", value: "04")
        XCTAssertEqual(Fingerprint.strongest(of: [sha1, sha256a, md5, sha256b, broken512]), [sha256a, sha256b])
        XCTAssertEqual(Fingerprint.strongest(of: [sha1]), [sha1])
        XCTAssertEqual(Fingerprint.strongest(of: [md5, broken512]), [])
        XCTAssertEqual(Fingerprint.strongest(of: []), [])
    }
}
