import Publishing
import XCTest

/// `--whip` and `--janus` URLs are checked at start-up (``URLReference/requestProblem(_:)``): a form libcurl
/// refuses only when the request is made ("URL using bad/illegal format") was retried for ever (a bad-input
/// review: `http://[::1`, `http://x:99999/`, `http://[zz]/`, `http://x%00/`).
final class URLCheckTests: XCTestCase {
    func testEachBadFormIsRefusedWithItsReason() {
        let cases: [(String, String)] = [
            ("http://[::1", "an IPv6 address must be closed with ']'"),
            ("http://[::1/whip", "an IPv6 address must be closed with ']'"),
            ("http://[zz]/", "'[zz]' is not an IPv6 address"),
            ("http://[fe80::1%25eth0]/", "'[fe80::1%25eth0]' is not an IPv6 address"),
            ("http://[::1]x/", "only ':PORT' may follow ']'"),
            ("http://::1/", "the URL has no host"),
            ("http://x:99999/", "the port must be a number of 1–65535, not '99999'"),
            ("http://x:0/", "the port must be a number of 1–65535, not '0'"),
            ("http://x:65536", "the port must be a number of 1–65535, not '65536'"),
            ("http://x:/", "the port must be a number of 1–65535, not ''"),
            ("http://x:-1/", "the port must be a number of 1–65535, not '-1'"),
            ("http://x:+80/", "the port must be a number of 1–65535, not '+80'"),
            ("http://x:1:2/", "the port must be a number of 1–65535, not '1:2'"),
            ("http://[::1]:70000/", "the port must be a number of 1–65535, not '70000'"),
            ("http://x%00/", "the host 'x%00' may hold letters, digits and '-._~' only"),
            ("http://x%41.example/", "the host 'x%41.example' may hold"),
            ("http://a]b/", "the host 'a]b' may hold"),
            ("http://256.0.0.1/", "'256.0.0.1' is not an IPv4 address (four parts of 0–255)"),
            ("http://1.2.3/", "'1.2.3' is not an IPv4 address"),
            ("http://x\u{1B}[2J/", "white space or a control character in the URL"),
            ("http://x\u{0}/", "white space or a control character in the URL"),
            ("http://x y/", "white space or a control character in the URL"),
            ("http://", "the URL has no host"),
            ("http://:80/", "the URL has no host"),
            ("http://user@/", "the URL has no host"),
            ("ftp://x/", "the scheme must be http or https"),
            ("x.example/whip", "not an absolute URL (no scheme://)"),
        ]
        for (url, reason) in cases {
            let problem = URLReference.requestProblem(url)
            XCTAssertNotNil(problem, url)
            XCTAssertTrue(problem?.hasPrefix(reason) == true, "\(url): \(problem ?? "accepted")")
            XCTAssertFalse(URLReference.isRequestable(url), url)
            XCTAssertNil(URLReference.origin(of: url).flatMap { $0.scheme == "ftp" ? nil : $0 }, url)
        }
    }

    func testGoodFormsAreStillAccepted() {
        for url in [
            "http://127.0.0.1:8080/whip", "https://sfu.example/whip/endpoint?room=1#x", "HTTP://SFU.Example:443/", "http://x:1/",
            "http://x:65535", "http://[::1]:8088/janus", "http://[::1]/", "https://[2001:db8::1]/whip", "http://[::ffff:192.0.2.1]:80/",
            "http://user:pass@sfu.example:8443/whip", "http://my_host-1.local/", "http://255.255.255.255/", "http://0.0.0.0:9/",
            "http://bücher.example/whip", "http://localhost", "http://sfu.example/path%20with%20escapes",
        ] {
            XCTAssertNil(URLReference.requestProblem(url), url)
            XCTAssertTrue(URLReference.isRequestable(url), url)
        }
    }

    func testOriginsOfGoodURLs() {
        XCTAssertEqual(URLReference.origin(of: "http://[::1]:8088/janus").map { "\($0.scheme) \($0.host) \($0.port)" }, "http [::1] 8088")
        XCTAssertEqual(URLReference.origin(of: "HTTPS://SFU.example/x").map { "\($0.scheme) \($0.host) \($0.port)" }, "https sfu.example 443")
        XCTAssertEqual(URLReference.origin(of: "http://u@h:81").map { "\($0.scheme) \($0.host) \($0.port)" }, "http h 81")
    }
}
