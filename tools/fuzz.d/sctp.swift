// Fuzz target: raw SCTP packets (RFC 9260) into an established usrsctp association of DataChannelSession,
// with channels open, as the peer's DTLS would hand them over.
//
// Input: records [length u16 % 1500] [chunks…]; each becomes a packet with the association's real common
// header (ports, verification tag: taken from the peer's own packets) so it reaches the chunk parsers
// (checksums are skipped: DataChannelSession.skipChecksumsForFuzzing). Between packets the two ends exchange
// what they made. Properties: nothing traps or hangs; at most maxChannels channels open; an association
// the input ended (ABORT, SHUTDOWN) is replaced for the next input.
import DataChannel
import Glibc

/// Two ends joined in memory, made once and again whenever an input ended the association.
final class Pair {
    let client: DataChannelSession
    let server: DataChannelSession
    var header: [UInt8] = []
    var up = false

    init() throws {
        client = try DataChannelSession(parity: .even, remoteMaxMessageSize: 65536, wake: {})
        server = try DataChannelSession(parity: .odd, remoteMaxMessageSize: 65536, wake: {})
        try client.start()
        try server.start()
        var clientUp = false, serverUp = false
        for _ in 0..<2000 where !(clientUp && serverUp) {
            if exchange().contains(.up) { serverUp = true }
            clientEvents += client.poll()
            if clientEvents.contains(.up) { clientUp = true }
            if !(clientUp && serverUp) { usleep(1000) }  // usrsctp's timers may be needed
        }
        up = clientUp && serverUp
        if up { _ = try? client.open(label: "fuzz") }
        _ = exchange()
    }

    /// The client's events (what the server's packets did to it).
    var clientEvents: [DataChannelSession.Event] = []

    /// Moves packets both ways once; returns the server's events. Keeps the client's common header.
    @discardableResult
    func exchange() -> [DataChannelSession.Event] {
        var events: [DataChannelSession.Event] = []
        for packet in client.takePackets() {
            if packet.count >= 12 { header = Array(packet.prefix(12)) }
            events += packet.withUnsafeBytes { server.receive($0) }
        }
        for packet in server.takePackets() { clientEvents += packet.withUnsafeBytes { client.receive($0) } }
        return events
    }
}

nonisolated(unsafe) var pair: Pair?
nonisolated(unsafe) var pairsMade = 0

func fuzzOne(_ bytes: [UInt8]) {
    if pair == nil {
        DataChannelSession.skipChecksumsForFuzzing()
    }
    if pair?.up != true {
        pair = nil  // the old association closes first
        pair = try? Pair()
        pairsMade += 1
    }
    guard let current = pair, current.up, current.header.count == 12 else {
        violated("the pair did not come up (pair \(pairsMade))")
    }
    var input = FuzzInput(bytes)
    while !input.isAtEnd {
        let chunks = Array(input.take(Int(input.u16()) % 1500))
        var packet = current.header + chunks
        packet[8...11] = [0, 0, 0, 0]  // the checksum, skipped
        for event in packet.withUnsafeBytes({ current.server.receive($0) }) {
            if case .lost = event { current.up = false }
        }
        current.exchange()
        check(current.server.openChannels.count <= DataChannelEstablishment.maxChannels, "too many channels")
    }
    for event in current.server.poll() { if case .lost = event { current.up = false } }
}
