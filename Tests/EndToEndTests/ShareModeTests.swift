import Foundation
import TestSupport
import XCTest

/// `screencast-call --share`: HTTPS with a self-signed certificate made at start (the printed fingerprint is
/// the one served), a fresh token carried by the printed link, and Chromium watching through that link in a
/// secure context; the sharer's log names each viewer joining and leaving, and a tab closed is a leave, not a
/// failure. In a loopback-only namespace (`--http 127.0.0.1:0` keeps the page there too).
final class ShareModeTests: XCTestCase {
    func testChromiumWatchesThroughThePrintedHTTPSLink() throws {
        guard EndToEnd.isInsideNamespace else {
            return try EndToEnd.rerunInLoopbackNamespace("EndToEndTests.ShareModeTests/testChromiumWatchesThroughThePrintedHTTPSLink", timeout: 150)
        }
        let chromium = URL(fileURLWithPath: "/usr/lib/chromium/chromium"), driver = URL(fileURLWithPath: "/usr/bin/chromedriver")
        guard EndToEnd.requireTools([chromium, driver, EndToEnd.systemPython, TestPaths.executable("screencast-call")]) else { return }
        let call = try CallUnderTest(["--share", "--source", "testpattern", "--pattern-size", "640x360"])
        defer { call.stop() }

        // The banner: one link (the page is bound to 127.0.0.1) with a 32-character token, and the fingerprint.
        let deadline = Date().addingTimeInterval(5)
        while !call.printed.contains(where: { $0.contains("SHA-256") }), Date() < deadline { usleep(50_000) }
        let printed = call.printed
        let link = try XCTUnwrap(printed.first { $0.hasPrefix("    https://") }?.trimmingCharacters(in: .whitespaces), "\(printed)")
        XCTAssertTrue(link.hasPrefix("https://127.0.0.1:\(call.port)/?token="), link)
        let token = String(link.split(separator: "=").last ?? "")
        XCTAssertEqual(token.count, 32, link)
        XCTAssertTrue(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, token)
        let index = try XCTUnwrap(printed.firstIndex { $0.contains("SHA-256") })
        let fingerprint = printed[index + 1].trimmingCharacters(in: .whitespaces)
        XCTAssertEqual(fingerprint.count, 32 * 3 - 1, fingerprint)

        // The certificate served is the one printed; WHEP needs the token.
        let probe = try EndToEnd.runPeer(EndToEnd.systemPython, "https_probe.py", ["--port", "\(call.port)", "--token=" + token], timeout: 30)
        XCTAssertEqual(probe["sha256"] as? String, fingerprint)
        XCTAssertEqual(probe["pageStatus"] as? Int, 200)
        XCTAssertEqual(probe["pageWithoutToken"] as? Int, 401, "the page needs the link's token")
        XCTAssertEqual(probe["whepWithoutToken"] as? Int, 401)
        // Plain HTTP to the HTTPS port (a link typed as http://): a redirect to the same path over https for a
        // GET, a 400 for anything else, each saying why; never the page, never an empty reply.
        let plainGET = probe["plainGET"] as? [String: Any] ?? [:], plainPOST = probe["plainPOST"] as? [String: Any] ?? [:]
        XCTAssertEqual(plainGET["status"] as? Int, 301, "\(plainGET)")
        XCTAssertEqual(plainGET["location"] as? String, "https://127.0.0.1:\(call.port)/?token=\(token)")
        XCTAssertTrue((plainGET["body"] as? String ?? "").hasPrefix("This port speaks HTTPS, not plain HTTP: open https://127.0.0.1:"), "\(plainGET)")
        XCTAssertEqual(plainPOST["status"] as? Int, 400, "\(plainPOST)")
        XCTAssertNil(plainPOST["location"] as? String)
        XCTAssertTrue((plainPOST["body"] as? String ?? "").contains("This port speaks HTTPS"), "\(plainPOST)")
        XCTAssertEqual(probe["pageAfterPlain"] as? Int, 200)
        XCTAssertTrue(call.log.contains("plain HTTP on the HTTPS port"), "logged for the sharer")

        let profile = call.folder.path("chromium")
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let browser = try PythonPeer(
            EndToEnd.systemPython, "chromium_viewer.py",
            ["--url", link, "--profile", profile + "/profile", "--frames", "30", "--timeout", "40", "--insecure-https", "--leave"],
            environment: ["HOME": profile, "TMPDIR": profile])
        let report = try browser.finish(timeout: 120)
        XCTAssertNil(report["error"] as? String, "\(report)")
        XCTAssertEqual(report["secureContext"] as? Bool, true, "the page runs in a secure context")
        let stats = try XCTUnwrap(report["stats"] as? [String: Any], "\(report)")
        XCTAssertGreaterThanOrEqual(stats["framesDecoded"] as? Int ?? 0, 30)
        XCTAssertEqual(report["videoWidth"] as? Int, 640)

        // Who watched, for the sharer: joined with the address, then left (the page's DELETE), not lost.
        XCTAssertNotNil(call.waitForLine("viewer left", timeout: 10), call.log)
        let joined = try XCTUnwrap(call.waitForLine("viewer joined", timeout: 1), call.log)
        XCTAssertTrue(joined.hasPrefix("info "), joined)
        XCTAssertTrue(joined.contains("address=127.0.0.1"), joined)
        let left = try XCTUnwrap(call.waitForLine("viewer left", timeout: 1))
        XCTAssertTrue(left.hasPrefix("info "), left)
        XCTAssertNil(call.waitForLine("viewer lost", timeout: 0), call.log)
    }

    /// A `--share` call restarted keeps its token and certificate (issue 34: a new token and certificate at every
    /// start stranded open pages on 401): the same link and fingerprint after a restart, kept in files of mode
    /// 0600 in a folder of 0700 under `XDG_STATE_HOME`; `--new-token` makes a new token (the old one gets 401) and
    /// keeps the certificate.
    func testARestartedShareKeepsItsTokenAndCertificate() throws {
        let state = try TemporaryDirectory(prefix: "sc-state")
        defer { state.remove() }
        func run(_ extra: [String] = []) throws -> (link: String, fingerprint: String, port: UInt16, log: String, call: CallUnderTest) {
            let call = try CallUnderTest(["--share", "--source", "testpattern", "--pattern-size", "160x96"] + extra, stateFolder: state.url.path)
            let deadline = Date().addingTimeInterval(10)
            while !call.printed.contains(where: { $0.contains("SHA-256") }), Date() < deadline { usleep(50_000) }
            let printed = call.printed
            let link = try XCTUnwrap(printed.first { $0.hasPrefix("    https://") }?.trimmingCharacters(in: .whitespaces), "\(printed)")
            let index = try XCTUnwrap(printed.firstIndex { $0.contains("SHA-256") })
            let fingerprint = printed[index + 1].trimmingCharacters(in: .whitespaces)
            return (link, fingerprint, call.port, call.log, call)
        }
        let first = try run()
        let firstToken = String(first.link.split(separator: "=").last ?? "")
        XCTAssertTrue(first.log.contains("share token made"), first.log)
        first.call.stop()
        let second = try run()
        defer { second.call.stop() }
        XCTAssertTrue(second.log.contains("share token kept from the last run"), second.log)
        XCTAssertTrue(second.log.contains("https certificate kept from the last run"), second.log)
        XCTAssertEqual(String(second.link.split(separator: "=").last ?? ""), firstToken, "the same token")
        XCTAssertEqual(second.fingerprint, first.fingerprint, "the same certificate")
        XCTAssertTrue(second.call.printed.contains { $0.contains("self-signed, kept from the last run") }, "\(second.call.printed)")
        XCTAssertEqual(firstToken.count, 32)
        let folder = state.path("screencast")
        for (path, mode) in [(folder, 0o700), (folder + "/share-token", 0o600), (folder + "/share-certificate.pem", 0o600), (folder + "/share-key.pem", 0o600)] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, mode, path)
        }
        XCTAssertEqual(try String(contentsOfFile: folder + "/share-token", encoding: .utf8), firstToken + "\n")
        second.call.stop()
        let third = try run(["--new-token"])
        defer { third.call.stop() }
        let thirdToken = String(third.link.split(separator: "=").last ?? "")
        XCTAssertNotEqual(thirdToken, firstToken, "--new-token")
        XCTAssertEqual(third.fingerprint, first.fingerprint, "the certificate is kept")
        let probe = try EndToEnd.runPeer(EndToEnd.systemPython, "https_probe.py", ["--port", "\(third.port)", "--token=" + firstToken], timeout: 30)
        XCTAssertEqual(probe["pageStatus"] as? Int, 401, "the old token is refused: \(probe)")
        XCTAssertEqual(probe["sha256"] as? String, first.fingerprint, "the certificate served is the kept one")
    }
}
