public import RTP

extension RTPSenderChain {
    /// Serializes an audio packet of the same transport (the BUNDLE's Opus stream, ``OutgoingAudioStream``) to
    /// leave now, ahead of whatever the video pacer holds: audio is a few kbit/s, and making it wait behind a
    /// keyframe's burst would only delay the sound the receiver lip-syncs the picture to. With congestion
    /// control it takes the next transport-wide sequence number, so the controller sees all bytes on the
    /// path (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2: one sequence across the bundle's streams).
    /// `reserving` leaves room for the SRTP trailer. Nil when it cannot be serialized (counted in
    /// ``Statistics/unsendablePackets``).
    public mutating func emitAudio(_ packet: RTPPacket, nowMicros now: UInt64, reserving trailer: Int = 0) -> [UInt8]? {
        var packet = packet
        congestion?.willSend(&packet, kind: .media, nowMicros: now)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(packet.serializedSize + trailer)
        do { try packet.serialize(into: &bytes) } catch {
            statistics.unsendablePackets += 1
            return nil
        }
        return bytes
    }
}
