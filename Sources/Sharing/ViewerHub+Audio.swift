import PeerConnection
public import RTPSession

extension ViewerHub {
    /// One Opus packet of the call's one Opus encoding, handed to every viewer (each sends it on its own audio
    /// SSRC when its answer accepted audio, at once, ahead of its video pacer; the others drop it). The
    /// bytes are shared, not copied.
    public func sendAudio(_ frame: OutgoingAudioFrame) {
        let peers = state.withLock { machine in machine.viewers.values.compactMap { $0.isPeer ? $0.peer : nil } }
        for peer in peers where peer.receivesAudio { peer.sendAudio(frame) }
    }
}
