import ICE
import SDP

extension LocalMediaParameters {
    /// Our side of one session, as both the answer (``PeerAnswer``) and the offer (``PeerOffer``) describe
    /// it: the ICE credentials and candidates given (all gathered: `candidatesComplete`), the certificate's
    /// DTLS fingerprint, and drawn from `generator` the video and RTX SSRCs (two different non-zero 32-bit
    /// values, RFC 3550 §8.1), a CNAME of 16 alphanumerics (RFC 7022 §4.1) and an SDP session id
    /// (RFC 4566 §5.2: 1 … 2⁶³ − 1).
    static func drawn(
        ice: ICEAgent.Credentials, candidates: [ICECandidate], configuration: PeerConnection.Configuration,
        using generator: inout some RandomNumberGenerator
    ) -> LocalMediaParameters {
        let videoSSRC = UInt32.random(in: 1...UInt32.max, using: &generator)
        var rtxSSRC = UInt32.random(in: 1...UInt32.max, using: &generator)
        while rtxSSRC == videoSSRC { rtxSSRC = UInt32.random(in: 1...UInt32.max, using: &generator) }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let cname = String((0..<16).map { _ in alphabet.randomElement(using: &generator)! })
        var local = LocalMediaParameters(
            iceUfrag: ice.ufrag, icePwd: ice.password, fingerprint: configuration.certificate.fingerprint, candidates: candidates,
            candidatesComplete: true, videoSSRC: videoSSRC, rtxSSRC: rtxSSRC, cname: cname,
            sessionID: UInt64.random(in: 1...UInt64(Int64.max), using: &generator))
        if configuration.sendsAudio {
            var audioSSRC = UInt32.random(in: 1...UInt32.max, using: &generator)
            while audioSSRC == videoSSRC || audioSSRC == rtxSSRC { audioSSRC = UInt32.random(in: 1...UInt32.max, using: &generator) }
            local.audioSSRC = audioSSRC
        }
        return local
    }
}
