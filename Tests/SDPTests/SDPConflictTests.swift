import SDP
import XCTest

/// Offers a break-it trial found answered though they contradict themselves (the exact bytes of its
/// `/tmp/breakit/t/base.py` offer and cases): one extmap ID for two extensions (RFC 8285 §6), one payload
/// type for two encodings (RFC 8866 §6.6), and fingerprints of the wrong length for their hash (RFC 8122 §5).
/// Each is malformed (``SDPError/isMalformed``: the WHEP route's 400) and says which line and why.
final class SDPConflictTests: XCTestCase {
    static let twcc = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    static let playoutDelay = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
    static let sha256 = Array(repeating: "AB", count: 32).joined(separator: ":")

    /// base.py's `offer()`: lines 1–20, then `extra` from line 21.
    static func offer(extra: String = "", fingerprint: String? = "a=fingerprint:sha-256 " + sha256) -> String {
        "v=0\r\no=- 123 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\na=group:BUNDLE 0\r\n"
            + "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\nc=IN IP4 0.0.0.0\r\na=rtcp:9 IN IP4 0.0.0.0\r\n"
            + "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n" + (fingerprint.map { $0 + "\r\n" } ?? "")
            + "a=setup:actpass\r\na=mid:0\r\na=recvonly\r\na=rtcp-mux\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:96 nack\r\n"
            + "a=rtcp-fb:96 nack pli\r\na=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n" + extra
    }

    func testTheBaseOfferIsAnswered() throws {
        let (answer, video) = try VideoAnswerBuilder.answer(SessionDescription(parsing: Self.offer()), local: localParameters())
        XCTAssertEqual(answer.media[0].formats, ["96", "97"])
        XCTAssertEqual(video.rtxPayloadType, 97)
    }

    // MARK: RFC 8285 §6: an ID maps to one extension

    func testTwoExtensionsWithOneIDAreRefused() {
        let twccFirst = Self.offer(extra: "a=extmap:3 \(Self.twcc)\r\na=extmap:3 \(Self.playoutDelay)\r\na=rtcp-fb:96 transport-cc\r\n")
        let error = SDPError.badAttribute(line: 22, name: "extmap", reason: "id 3 is already mapped to \(Self.twcc) (RFC 8285 §6: one extension per id)")
        assertThrowsSDPError(try SessionDescription(parsing: twccFirst), error)
        XCTAssertTrue(error.isMalformed)
        XCTAssertEqual(error.description, "SDP line 22: bad a=extmap: id 3 is already mapped to \(Self.twcc) (RFC 8285 §6: one extension per id)")

        let delayFirst = Self.offer(extra: "a=extmap:3 \(Self.playoutDelay)\r\na=extmap:3 \(Self.twcc)\r\na=rtcp-fb:96 transport-cc\r\n")
        assertThrowsSDPError(try SessionDescription(parsing: delayFirst), .badAttribute(
            line: 22, name: "extmap", reason: "id 3 is already mapped to \(Self.playoutDelay) (RFC 8285 §6: one extension per id)"))
        // Session level too (RFC 8285 §8 allows extmap there).
        let session = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\na=extmap:5 urn:a\r\na=extmap:5/sendonly urn:b\r\n"
        assertThrowsSDPError(try SessionDescription(parsing: session), .badAttribute(
            line: 6, name: "extmap", reason: "id 5 is already mapped to urn:a (RFC 8285 §6: one extension per id)"))
    }

    /// The same mapping twice is redundant, not contradictory; distinct IDs for distinct URIs answer as before.
    func testARepeatedMappingAndDistinctIDsAreKept() throws {
        let repeated = Self.offer(extra: "a=extmap:3 \(Self.twcc)\r\na=extmap:3 \(Self.twcc)\r\na=rtcp-fb:96 transport-cc\r\n")
        XCTAssertEqual(try SessionDescription(parsing: repeated).media[0].extensionMaps.count, 2)
        let distinct = Self.offer(extra: "a=extmap:3 \(Self.twcc)\r\na=extmap:4 \(Self.playoutDelay)\r\na=rtcp-fb:96 transport-cc\r\n")
        let (answer, video) = try VideoAnswerBuilder.answer(SessionDescription(parsing: distinct), local: localParameters())
        XCTAssertEqual(answer.media[0].extensionMaps.map(\.id), [3, 4])
        XCTAssertEqual(video.transportWideCCExtensionID, 3)
        XCTAssertEqual(video.playoutDelayExtensionID, 4)
    }

    // MARK: RFC 8866 §6.6: a payload type maps to one encoding

    func testOnePayloadTypeForVP8AndRTXIsRefused() {
        // t4.py "rtx same pt as vp8": m= lists 96 alone, `a=rtpmap:96 rtx/90000`, `a=fmtp:96 apt=96`.
        let alone = Self.offer()
            .replacingOccurrences(of: "m=video 9 UDP/TLS/RTP/SAVPF 96 97", with: "m=video 9 UDP/TLS/RTP/SAVPF 96")
            .replacingOccurrences(of: "a=rtpmap:97 rtx/90000", with: "a=rtpmap:96 rtx/90000")
            .replacingOccurrences(of: "fmtp:97", with: "fmtp:96")
        let error = SDPError.badAttribute(
            line: 19, name: "rtpmap", reason: "payload type 96 is already mapped to VP8/90000 (RFC 8866 §6.6: one encoding per payload type)")
        assertThrowsSDPError(try SessionDescription(parsing: alone), error)
        XCTAssertTrue(error.isMalformed)
        XCTAssertEqual(error.description,
                       "SDP line 19: bad a=rtpmap: payload type 96 is already mapped to VP8/90000 (RFC 8866 §6.6: one encoding per payload type)")
        // t2.py "vp8 = rtx pt": the m= line still lists 96 97.
        let listed = Self.offer().replacingOccurrences(of: "a=rtpmap:97 rtx/90000", with: "a=rtpmap:96 rtx/90000")
        assertThrowsSDPError(try SessionDescription(parsing: listed), error)
        // Another clock rate or channel count is another encoding; the same one repeated is kept.
        assertThrowsSDPError(try SessionDescription(parsing: Self.offer(extra: "a=rtpmap:96 VP8/48000\r\n")), .badAttribute(
            line: 21, name: "rtpmap", reason: "payload type 96 is already mapped to VP8/90000 (RFC 8866 §6.6: one encoding per payload type)"))
        XCTAssertNoThrow(try SessionDescription(parsing: Self.offer(extra: "a=rtpmap:96 vp8/90000\r\n")))
    }

    /// Built without the parser (a description assembled in code), VP8 and RTX on one payload type still
    /// answer that payload type once: RTX is left out.
    func testTheAnswerNeverListsAPayloadTypeTwice() throws {
        var offer = try SessionDescription(parsing: Self.offer())
        offer.media[0].attributes = offer.media[0].attributes.map { attribute in
            switch attribute {
            case .rtpmap(let map) where map.payloadType == 97: .rtpmap(RTPMap(payloadType: 96, encodingName: "rtx", clockRate: 90_000))
            case .fmtp: .fmtp(FormatParameters(format: "96", text: "apt=96"))
            default: attribute
            }
        }
        let (answer, video) = try VideoAnswerBuilder.answer(offer, local: localParameters())
        XCTAssertEqual(answer.media[0].formats, ["96"])
        XCTAssertEqual(answer.media[0].rtpMaps.map(\.payloadType), [96])
        XCTAssertNil(video.rtxPayloadType)
    }

    // MARK: RFC 8122 §5: a digest as long as its hash function's output

    func testFingerprintsOfTheWrongLengthAreRefusedNamingTheLength() {
        func hex(_ count: Int) -> String { Array(repeating: "AB", count: count).joined(separator: ":") }
        for (bytes, label) in [(1, "fp short"), (33, "fp sha-256 33 bytes"), (10_000, "fp huge")] {
            let offer = Self.offer(fingerprint: "a=fingerprint:sha-256 " + hex(bytes))
            let error = SDPError.badAttribute(
                line: 11, name: "fingerprint", reason: "a sha-256 digest is 32 bytes, this one \(bytes) (RFC 8122 §5)")
            assertThrowsSDPError(try SessionDescription(parsing: offer), error)
            XCTAssertTrue(error.isMalformed, label)
            XCTAssertEqual(error.description, "SDP line 11: bad a=fingerprint: a sha-256 digest is 32 bytes, this one \(bytes) (RFC 8122 §5)")
        }
        for (name, length) in [("sha-1", 20), ("sha-224", 28), ("sha-256", 32), ("sha-384", 48), ("sha-512", 64)] {
            XCTAssertEqual(Fingerprint.digestLength(name), length)
            XCTAssertEqual(Fingerprint.digestLength(name.uppercased()), length)
            XCTAssertNoThrow(try SessionDescription(parsing: Self.offer(fingerprint: "a=fingerprint:\(name) " + hex(length))), name)
            for wrong in [length - 1, length + 1] {
                assertThrowsSDPError(try Fingerprint(sdpValue: "\(name) " + hex(wrong)), .badAttribute(
                    line: 0, name: "fingerprint", reason: "a \(name) digest is \(length) bytes, this one \(wrong) (RFC 8122 §5)"))
            }
        }
        // A hash function we do not check has no known length: parsed, then refused as unsupported (422).
        XCTAssertNil(Fingerprint.digestLength("md5"))
        XCTAssertNoThrow(try Fingerprint(sdpValue: "md5 " + hex(3)))
    }
}
