// Fuzz target: DCEP messages (RFC 8832 §5) and the channel rules of DataChannelEstablishment (RFC 8831).
//
// Input: records [stream u16] [ppid u8 → one of 50…57 or the raw byte] [length u16 % 2048] [payload…], the
// events of one association, fed to a DataChannelEstablishment; each payload also parsed as DCEP alone.
// Properties: a DCEP message that parses serializes to bytes that parse to it again; the machine never holds more than
// maxChannels channels; every action names a stream below streamCount (or the stream it was given); a
// message delivered has the payload it came with (strings as their UTF-8); nothing traps.
import DataChannel

func fuzzOne(_ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    var machine = DataChannelEstablishment(parity: input.byte() & 1 == 0 ? .even : .odd, maxMessageSize: 1024,
                                           remoteMaxMessageSize: 512, streamCount: 1024)
    while !input.isAtEnd {
        let stream = input.u16()
        let choice = input.byte()
        let ppid = choice < 128 ? UInt32(50 + choice % 8) : UInt32(choice)
        let payload = Array(input.take(Int(input.u16()) % 2048))
        payload.withUnsafeBytes { raw in
            // A reliable channel's Reliability Parameter is ignored (RFC 8832 §5.1) and written as 0, so the
            // property is parse → serialize → parse, not byte identity.
            if let message = try? DCEPMessage(parsing: raw) {
                let again = message.bytes.withUnsafeBytes { try? DCEPMessage(parsing: $0) }
                check(again == message, "DCEP \(message) serialized to \(message.bytes), which parses as \(String(describing: again))")
            }
        }
        let actions = payload.withUnsafeBytes { machine.received(streamID: stream, ppid: ppid, payload: $0) }
        for action in actions {
            switch action {
            case .message(let id, let message):
                check(id == stream, "a message on stream \(id) from stream \(stream)")
                switch message {
                case .string(let text): check(Array(text.utf8) == payload || (text.isEmpty && ppid == 56), "string changed")
                case .binary(let data): check(data == payload || (data.isEmpty && ppid == 57), "bytes changed")
                }
            case .send(let id, _, let out, _): check(id == stream && !out.isEmpty, "send on \(id) for \(stream)")
            case .resetStream(let id), .closed(let id, _), .refused(let id, _): check(id == stream, "action on \(id) for \(stream)")
            case .opened(let channel): check(channel.streamID == stream && channel.streamID < 1024, "opened \(channel)")
            }
        }
        check(machine.openChannels.count <= DataChannelEstablishment.maxChannels, "\(machine.openChannels.count) channels")
        // Now and then the peer resets a stream, or we send on one.
        switch input.byte() % 4 {
        case 0: _ = machine.peerResetStream(stream)
        case 1: _ = try? machine.send(.binary(Array(payload.prefix(600))), on: stream)
        default: break
        }
    }
}
