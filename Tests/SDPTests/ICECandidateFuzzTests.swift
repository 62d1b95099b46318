import SDP
import TestSupport
import XCTest

/// ``ICECandidate`` against generated input: 1 000 candidates built from the grammar (RFC 8839 §5.1) print
/// and parse back to themselves; 3 000 damaged ones parse or are refused as a bad candidate, nothing else.
final class ICECandidateFuzzTests: XCTestCase {
    func testGeneratedCandidatesRoundTrip() throws {
        var generator = SeededGenerator(seed: 8839)
        let iceChars = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")
        func word(_ alphabet: [Character], _ length: ClosedRange<Int>) -> String {
            String((0..<Int.random(in: length, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        func address() -> String {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return (0..<4).map { _ in String(UInt8.random(in: 0...255, using: &generator)) }.joined(separator: ".")
            case 1: return "2001:db8::" + String(UInt16.random(in: 0...UInt16.max, using: &generator), radix: 16)
            default: return word(Array("abcdef0123456789-"), 8...36) + ".local"
            }
        }
        let kinds: [ICECandidate.Kind] = [.host, .serverReflexive, .peerReflexive, .relay, .other("x-test")]
        for round in 0..<1000 {
            let candidate = ICECandidate(
                foundation: word(iceChars, 1...32), component: UInt16.random(in: 1...UInt16.max, using: &generator),
                transport: ["udp", "UDP", "tcp"].randomElement(using: &generator)!, priority: UInt32.random(in: 0...UInt32.max, using: &generator),
                address: address(), port: UInt16.random(in: 0...UInt16.max, using: &generator), kind: kinds.randomElement(using: &generator)!,
                relatedAddress: Bool.random(using: &generator) ? address() : nil,
                relatedPort: Bool.random(using: &generator) ? UInt16.random(in: 0...UInt16.max, using: &generator) : nil,
                extensions: (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                    (word(Array("abcdefghijklmnopqrstuvwxyz-"), 1...12), word(iceChars, 1...8))
                })
            let parsed = try ICECandidate(parsing: candidate.description)
            XCTAssertEqual(parsed, candidate, "round \(round)")
            XCTAssertEqual(parsed.sdpValue, candidate.sdpValue)
            XCTAssertEqual(parsed.extensions.map(\.name), candidate.extensions.map(\.name))
            XCTAssertEqual(parsed.hasHostName, candidate.address.hasSuffix(".local"))
        }
    }

    func testDamagedCandidatesAreRefusedAsCandidates() throws {
        var generator = SeededGenerator(seed: 5)
        let originals = [
            "1467250027 1 udp 2122260223 192.168.1.20 54321 typ host generation 0 network-id 1",
            "842163049 1 udp 1677729535 203.0.113.5 52200 typ srflx raddr 192.168.1.20 rport 54321",
            "9 1 udp 16777214 2001:db8::9 3478 typ relay raddr 203.0.113.5 rport 52200",
        ]
        var refused = 0
        for _ in 0..<3000 {
            var characters = Array(originals.randomElement(using: &generator)!)
            let index = Int.random(in: 0..<characters.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: characters.remove(at: index)
            case 1: characters[index] = Array(" x9:-.\u{1}")[Int.random(in: 0..<7, using: &generator)]
            default: characters.insert(" ", at: index)
            }
            do {
                let candidate = try ICECandidate(parsing: String(characters))
                XCTAssertEqual(try ICECandidate(parsing: candidate.sdpValue), candidate)
            } catch {
                refused += 1
                guard case .badAttribute(0, "candidate", _) = error else { return XCTFail("\(String(characters)): \(error)") }
            }
        }
        XCTAssertGreaterThan(refused, 500)
    }
}
