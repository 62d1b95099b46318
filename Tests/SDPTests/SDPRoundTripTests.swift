import SDP
import TestSupport
import XCTest

/// The parser and printer against generated and damaged descriptions: 400 seeded random descriptions
/// (every attribute kind, random values within their grammar) print and parse back to themselves; a
/// fixture damaged one line at a time either still parses or names exactly that line; a fixture cut at
/// every line boundary parses to its prefix or names what is missing.
final class SDPRoundTripTests: XCTestCase {
    /// Random descriptions from the grammar, built as values, printed, parsed, compared.
    func testGeneratedDescriptionsRoundTrip() throws {
        var generator = SeededGenerator(seed: 0x5D9_2026)
        func token(_ length: ClosedRange<Int> = 1...8) -> String {
            let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'")
            return String((0..<Int.random(in: length, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        func iceChars(_ length: ClosedRange<Int>) -> String {
            let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")
            return String((0..<Int.random(in: length, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        func attribute() -> SDPAttribute {
            let payloadType = UInt8.random(in: 0...127, using: &generator)
            switch Int.random(in: 0..<20, using: &generator) {
            case 0: return .rtpmap(RTPMap(payloadType: payloadType, encodingName: token(), clockRate: UInt32.random(in: 1...200_000, using: &generator),
                                          channels: Bool.random(using: &generator) ? UInt8.random(in: 0...8, using: &generator) : nil))
            case 1: return .fmtp(FormatParameters(format: String(payloadType), text: "\(token())=\(token());\(token())"))
            case 2: return .rtcpFeedback(RTCPFeedbackAttribute(
                payloadType: Bool.random(using: &generator) ? payloadType : nil, type: token(),
                parameter: Bool.random(using: &generator) ? token() + " " + token() : nil))
            case 3: return .mid(token())
            case 4: return .group(SDPGroup(semantics: token(), mids: (0..<Int.random(in: 0...3, using: &generator)).map { _ in token() }))
            case 5: return .iceUfrag(iceChars(4...16))
            case 6: return .icePwd(iceChars(22...40))
            case 7: return .iceOptions((0..<Int.random(in: 1...3, using: &generator)).map { _ in token() })
            case 8: return .fingerprint(Fingerprint(algorithm: "sha-256", digest: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }))
            case 9: return .setup(DTLSSetup.allCases.randomElement(using: &generator)!)
            case 10: return .candidate(ICECandidate(
                foundation: iceChars(1...10), component: UInt16.random(in: 1...2, using: &generator), transport: "udp",
                priority: UInt32.random(in: 0...UInt32.max, using: &generator), address: "192.0.2.\(UInt8.random(in: 1...254, using: &generator))",
                port: UInt16.random(in: 0...UInt16.max, using: &generator), kind: [.host, .serverReflexive, .relay].randomElement(using: &generator)!,
                extensions: Bool.random(using: &generator) ? [("generation", "0")] : []))
            case 11: return .endOfCandidates
            case 12: return .rtcpMux
            case 13: return .rtcpReducedSize
            case 14: return .ssrc(SSRCAttribute(ssrc: UInt32.random(in: 0...UInt32.max, using: &generator), name: token(),
                                                value: Bool.random(using: &generator) ? token() + " " + token() : nil))
            case 15: return .ssrcGroup(SSRCGroup(semantics: "FID", ssrcs: (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                UInt32.random(in: 0...UInt32.max, using: &generator) }))
            case 16: return .extmap(ExtensionMap(
                id: UInt8.random(in: 1...255, using: &generator), direction: Bool.random(using: &generator) ? MediaDirection.allCases.randomElement(using: &generator) : nil,
                uri: "urn:" + token(), attributes: Bool.random(using: &generator) ? token() : nil))
            case 17: return .direction(MediaDirection.allCases.randomElement(using: &generator)!)
            case 18: return .iceLite
            default: return .other(name: "x-" + token(), value: Bool.random(using: &generator) ? token() : nil)
            }
        }
        for round in 0..<400 {
            var description = SessionDescription(
                origin: .init(sessionID: String(UInt64.random(in: 0...UInt64.max, using: &generator)), sessionVersion: String(round)),
                sessionName: token(), attributes: (0..<Int.random(in: 0...4, using: &generator)).map { _ in attribute() })
            description.connection = Bool.random(using: &generator) ? .init(address: "0.0.0.0") : nil
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let formats = (0..<Int.random(in: 1...4, using: &generator)).map { _ in String(UInt8.random(in: 0...127, using: &generator)) }
                var section = MediaDescription(kind: ["video", "audio"].randomElement(using: &generator)!, port: UInt16.random(in: 0...UInt16.max, using: &generator),
                                               proto: "UDP/TLS/RTP/SAVPF", formats: formats)
                if description.connection == nil { section.connection = .init(addressType: "IP6", address: "::") }
                section.attributes = (0..<Int.random(in: 0...12, using: &generator)).map { _ in attribute() }
                description.media.append(section)
            }
            let text = description.serialized()
            let parsed: SessionDescription
            do { parsed = try SessionDescription(parsing: text) } catch { return XCTFail("round \(round): \(error)\n\(text)") }
            XCTAssertEqual(parsed, description, "round \(round)")
            XCTAssertEqual(parsed.serialized(), text, "round \(round)")
        }
    }

    /// Every line of Chromium's offer with one byte removed at its start, middle or end: the description
    /// still parses, or the error names that very line (never a crash, never another line).
    func testDamageIsReportedOnItsLine() throws {
        let lines = lines(try fixture("chromium-whep-offer.sdp"))
        var refused = 0
        for (index, line) in lines.enumerated() {
            for position in Set([0, line.count / 2, max(0, line.count - 1)]) where !line.isEmpty {
                var damaged = lines
                var characters = Array(line)
                characters.remove(at: min(position, characters.count - 1))
                damaged[index] = String(characters)
                let text = damaged.joined(separator: "\r\n") + "\r\n"
                do {
                    _ = try SessionDescription(parsing: text)
                } catch {
                    refused += 1
                    switch error {
                    case .badLine(let number, _, _), .unexpectedLine(let number, _), .badAttribute(let number, _, _):
                        XCTAssertEqual(number, index + 1, "\(error) for damage in line \(index + 1): \(damaged[index])")
                    case .missingLine:
                        XCTAssertTrue(["v=", "o=", "s=", "t=", "c="].contains { line.hasPrefix($0) }, "\(error) for line \(index + 1)")
                    default:
                        XCTFail("\(error) for line \(index + 1)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(refused, 20, "enough damage is caught to matter")
    }

    /// aiortc's offer cut after each of its lines: a prefix that reaches `t=` parses and prints back as
    /// itself, unless it ends on an `m=` line whose `c=` was cut off; a shorter one names the first missing
    /// session line.
    func testEveryLinePrefix() throws {
        let lines = lines(try fixture("aiortc-offer.sdp"))
        for count in 0...lines.count {
            let text = lines.prefix(count).map { $0 + "\r\n" }.joined()
            if count >= 4, lines[count - 1].hasPrefix("m=") {
                let sections = lines.prefix(count).filter { $0.hasPrefix("m=") }.count
                assertThrowsSDPError(try SessionDescription(parsing: text), .missingLine("c=", section: "m-line \(sections - 1)"))
            } else if count >= 4 {
                XCTAssertEqual(try SessionDescription(parsing: text).serialized(), text, "\(count) lines")
            } else {
                let missing = ["v=", "o=", "s=", "t="][count]
                assertThrowsSDPError(try SessionDescription(parsing: text), .missingLine(missing, section: "session"))
            }
        }
    }
}
