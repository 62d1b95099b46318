import PeerConnection
import SDP
import XCTest

/// The ICE restart fragment (RFC 8840 §4/§9, RFC 9725 §4.3.3): rendered byte for byte, read back, read
/// truncated at every byte, and the refusals.
final class ICERestartFragmentTests: XCTestCase {
    let fragment = ICERestartFragment(
        ufrag: "Ab3d", password: "0123456789abcdefghij+/",
        candidates: ["candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host", "candidate:2 1 udp 1694498815 192.0.2.7 40000 typ srflx raddr 127.0.0.1 rport 50000"],
        complete: true, mid: "0")

    let wire = "a=ice-ufrag:Ab3d\r\n"
        + "a=ice-pwd:0123456789abcdefghij+/\r\n"
        + "a=group:BUNDLE 0\r\n"
        + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
        + "a=mid:0\r\n"
        + "a=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r\n"
        + "a=candidate:2 1 udp 1694498815 192.0.2.7 40000 typ srflx raddr 127.0.0.1 rport 50000\r\n"
        + "a=end-of-candidates\r\n"

    func testRendersByteForByte() {
        XCTAssertEqual(Array(fragment.rendered(payloadType: 96).utf8), Array(wire.utf8))
        let bare = ICERestartFragment(ufrag: "Ab3d", password: "0123456789abcdefghij+/", candidates: [], complete: false)
        XCTAssertEqual(bare.rendered(), "a=ice-ufrag:Ab3d\r\na=ice-pwd:0123456789abcdefghij+/\r\n")
    }

    func testParsesWholeWithCRLFOrLF() throws {
        XCTAssertEqual(try ICERestartFragment(parsing: wire), fragment)
        XCTAssertEqual(try ICERestartFragment(parsing: wire.replacingOccurrences(of: "\r\n", with: "\n")), fragment)
        // simple-whip-server's answer: credentials only.
        let answer = try ICERestartFragment(parsing: "a=ice-ufrag:wxyz\r\na=ice-pwd:ABCDEFGHIJKLMNOPQRSTUV\r\n")
        XCTAssertEqual(answer, ICERestartFragment(ufrag: "wxyz", password: "ABCDEFGHIJKLMNOPQRSTUV", candidates: [], complete: false))
    }

    /// Every prefix either throws a typed ``SDPError`` or reads the full fragment's credentials with a
    /// prefix of its candidates (the last one may be a shorter, still well-formed, line); never a crash.
    func testEveryTruncationIsTypedOrConsistent() {
        let bytes = Array(wire.utf8)
        var parsed = 0, refused = 0
        for length in 0...bytes.count {
            let text = String(decoding: bytes[0..<length], as: UTF8.self)
            do {
                let read = try ICERestartFragment(parsing: text)
                parsed += 1
                XCTAssertEqual(read.ufrag, fragment.ufrag, "length \(length)")
                XCTAssertEqual(read.password, fragment.password, "length \(length)")
                XCTAssertLessThanOrEqual(read.candidates.count, 2)
                XCTAssertEqual(Array(read.candidates.dropLast()), Array(fragment.candidates.prefix(max(0, read.candidates.count - 1))))
                XCTAssertEqual(read.complete, length >= bytes.count - 2, "length \(length)")
            } catch {
                refused += 1
            }
        }
        XCTAssertGreaterThan(parsed, 100)
        XCTAssertGreaterThan(refused, 40)
    }

    func testRefusals() {
        func refusal(_ text: String) -> SDPError? {
            do {
                _ = try ICERestartFragment(parsing: text)
                return nil
            } catch { return error }
        }
        let pwd = "a=ice-pwd:0123456789abcdefghij+/\r\n"
        XCTAssertEqual(refusal(pwd), .missingLine("a=ice-ufrag", section: "ICE restart fragment"))
        XCTAssertEqual(refusal("a=ice-ufrag:Ab3d\r\n"), .missingLine("a=ice-pwd", section: "ICE restart fragment"))
        XCTAssertEqual(refusal("a=ice-ufrag:Ab3\r\n" + pwd), .badAttribute(line: 1, name: "ice-ufrag", reason: "must be 4–256 ice-chars"))
        XCTAssertEqual(refusal("a=ice-ufrag:Ab 3d\r\n" + pwd), .badAttribute(line: 1, name: "ice-ufrag", reason: "must be 4–256 ice-chars"))
        XCTAssertEqual(refusal("a=ice-ufrag:Ab3d\r\na=ice-pwd:short\r\n"), .badAttribute(line: 2, name: "ice-pwd", reason: "must be 22–256 ice-chars"))
        XCTAssertEqual(refusal("a=ice-ufrag:Ab3d\r\na=ice-ufrag:Zz9z\r\n" + pwd), .badAttribute(line: 2, name: "ice-ufrag", reason: "a second, different ice-ufrag"))
        guard case .badAttribute(3, "candidate", _)? = refusal("a=ice-ufrag:Ab3d\r\n" + pwd + "a=candidate:1 1 udp x 127.0.0.1 5 typ host\r\n") else {
            return XCTFail("a malformed candidate")
        }
        let huge = "a=ice-ufrag:Ab3d\r\n" + pwd + String(repeating: "a=x\r\n", count: 4000)
        XCTAssertEqual(refusal(huge), .tooLarge(bytes: huge.utf8.count, limit: ICERestartFragment.sizeLimit))
    }

    func testGate() {
        var gate = ICERestartGate()
        XCTAssertTrue(gate.admits(keyframe: false), "idle: everything goes")
        XCTAssertFalse(gate.pathUp(), "no restart, no keyframe request")
        gate.restarted()
        XCTAssertFalse(gate.admits(keyframe: true), "restarting: nothing goes, not even a keyframe")
        XCTAssertTrue(gate.pathUp())
        XCTAssertFalse(gate.pathUp(), "asked once")
        XCTAssertFalse(gate.admits(keyframe: false))
        XCTAssertTrue(gate.admits(keyframe: true))
        XCTAssertTrue(gate.admits(keyframe: false), "after the keyframe, deltas go")
        XCTAssertEqual(gate.restarts, 1)
        XCTAssertEqual(gate.framesDropped, 2)
        XCTAssertEqual(gate.phase, .idle)
    }
}
