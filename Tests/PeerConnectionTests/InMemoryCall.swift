import DTLS
import ICE
import PeerConnection
import RTP
import RTPSession
import ScreencastSupport
import SDP
import TestSupport
import XCTest

/// Our answering ``PeerConnectionStateMachine`` and a ``TestViewer`` back to back through an in-memory link:
/// one-way delay, seeded loss of media and RTCP (DTLS is spared: its retransmissions run on OpenSSL's own
/// clock), and an injected clock that jumps from one deadline to the next. An "encoder" offers a frame
/// every 33 ms and makes the next one a keyframe whenever the machine asks.
final class InMemoryCall {
    struct Link {
        var delayMicros: UInt64 = 10_000
        /// Loss of RTP/RTCP datagrams towards the viewer and back, 0…1, from `lossFromMicros` on.
        var lossToViewer = 0.0
        var lossToSender = 0.0
        var lossFromMicros: UInt64 = 0
        /// A bottleneck towards the viewer (bits per second; nil: none) with a drop-tail queue of
        /// `queueBytes` (tbf's `limit`): datagrams leave one after the other at the rate, then the delay.
        var rateToViewer: Double?
        var queueBytes = 30_000
    }

    /// A frame the encoder made, and whether the machine was given it while connected.
    struct Sent {
        var frame: OutgoingVideoFrame
        var atMicros: UInt64
    }

    static let wallClockBase: UInt64 = 1_700_000_000_000_000
    var machine: PeerConnectionStateMachine
    let viewer: TestViewer
    /// What the machine was made with (from our answer, or from the viewer's answer to our offer).
    let negotiated: NegotiatedVideo
    let senderConfiguration: RTPSenderChain.Configuration
    var link: Link
    private(set) var now: UInt64 = 1_000_000
    private var generator = SeededGenerator(seed: 42)
    private var inFlight: [(at: UInt64, toViewer: Bool, datagram: [UInt8])] = []
    private var deadline: UInt64?
    private var nextFrameMicros: UInt64 = 1_000_000
    private var keyframeWanted = false
    private var frameIndex = 0
    private(set) var sent: [Sent] = []
    private(set) var events: [(micros: UInt64, event: PeerConnection.Event)] = []
    private(set) var lost = (toViewer: 0, toSender: 0)
    /// RTP/RTCP datagrams the loss applied to (sent from `lossFromMicros` on).
    private(set) var exposed = (toViewer: 0, toSender: 0)
    /// Every datagram put on the link towards the viewer, when `recording`.
    private(set) var recorded: [[UInt8]] = []
    var recording = false
    /// Whether the encoder runs (frames every 33 ms).
    var encoding = true
    /// Delta frames sized to the last `.targetBitrate` (an encoder that holds its target) instead of the
    /// fixed 1–7 kB pattern.
    var followTarget = false
    private(set) var target: UInt64?
    /// When the bottleneck's queue is free again, and datagrams it dropped.
    private var bottleneckFreeMicros: UInt64 = 0
    private(set) var bottleneckDrops = 0
    /// Datagrams on their way to the viewer now.
    var inFlightToViewer: Int { inFlight.filter(\.toViewer).count }
    /// Of `lost.toViewer`, RTCP datagrams (the rest are RTP).
    private(set) var lostRTCPToViewer = 0

    init(
        link: Link = Link(), viewerSetup: DTLSSetup = .actpass, transportWideCC: UInt8? = nil, audio: Bool = false,
        sender adjust: (inout RTPSenderChain.Configuration) -> Void = { _ in }
    ) throws {
        self.link = link
        viewer = try TestViewer(transportWideCC: transportWideCC, audio: audio)
        var configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlled), certificate: try DTLSCertificate.shared())
        configuration.sendsAudio = audio
        let offer = try PeerAnswer.check(offer: try viewer.offer(setup: viewerSetup), fingerprint: configuration.certificate.fingerprint)
        var random = SeededGenerator(seed: 7)
        let plan = try PeerAnswer(
            offer: offer, ice: .init(ufrag: "ours", password: "0123456789abcdefghijkl"),
            candidates: [try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host")],
            configuration: configuration, using: &random)
        var sender = plan.sender
        adjust(&sender)
        negotiated = plan.negotiated
        senderConfiguration = sender
        machine = try PeerConnectionStateMachine(
            id: "in-memory", negotiated: plan.negotiated, certificate: configuration.certificate, sender: sender, audio: plan.audio,
            logger: Logger(component: "test", threshold: .error), nowMicros: now)
        try viewer.accept(answer: plan.answer)
        carry(machine.start(nowMicros: now))
        try toSender(viewer.start(nowMicros: now))
    }

    /// The other way round, as when publishing to an SFU: we offer (``PeerOffer``), the viewer answers
    /// recvonly with `a=setup:<answerSetup>` (`active`: it is the DTLS client, as Janus is; `passive`: the
    /// server), and our machine is made from its answer.
    init(offeringTo answerSetup: DTLSSetup, link: Link = Link()) throws {
        self.link = link
        viewer = try TestViewer()
        let configuration = PeerConnection.Configuration(
            ice: ICEAgent.Configuration(role: .controlling), certificate: try DTLSCertificate.shared())
        var random = SeededGenerator(seed: 9)
        let plan = try PeerOffer(
            ice: .init(ufrag: "ours", password: "0123456789abcdefghijkl"),
            candidates: [try ICECandidate(parsing: "candidate:1 1 udp 2130706431 127.0.0.1 5000 typ host")],
            configuration: configuration, using: &random)
        let answer = try viewer.answer(offer: plan.offer, setup: answerSetup)
        let accepted = try plan.accept(answer: answer)
        negotiated = accepted.negotiated
        senderConfiguration = accepted.sender
        machine = try PeerConnectionStateMachine(
            id: "offering", negotiated: accepted.negotiated, certificate: configuration.certificate, sender: accepted.sender,
            logger: Logger(component: "test", threshold: .error), nowMicros: now)
        carry(machine.start(nowMicros: now))
        try toSender(viewer.start(nowMicros: now))
    }

    static func ntp(_ micros: UInt64) -> NTPTimestamp { NTPTimestamp(unixMicroseconds: wallClockBase + micros) }

    /// A frame of `size` bytes, seeded, its first byte saying keyframe or not (RFC 6386 §9.1: bit 0 clear).
    func frame(keyframe: Bool, size: Int) -> [UInt8] {
        var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[0] = keyframe ? 0x50 : 0x51
        return bytes
    }

    /// Runs the call until `end` (µs on the injected clock).
    func run(until end: UInt64) throws {
        while true {
            let next = [
                inFlight.map(\.at).min(), deadline, encoding ? nextFrameMicros : nil, viewer.nextDeadline(nowMicros: now),
            ].compactMap { $0 }.min() ?? end
            guard next <= end else { break }
            now = max(now, next)
            while let index = inFlight.firstIndex(where: { $0.at <= now }) {
                let (_, toViewer, datagram) = inFlight.remove(at: index)
                if toViewer {
                    try self.toSender(viewer.receive(datagram, nowMicros: now))
                } else {
                    carry(machine.receive(datagram, nowMicros: now, wallClock: Self.ntp(now)))
                }
            }
            if let due = deadline, now >= due { carry(machine.handleTimer(nowMicros: now, wallClock: Self.ntp(now))) }
            if encoding, now >= nextFrameMicros {
                let keyframe = keyframeWanted
                keyframeWanted = false
                var size = keyframe ? 40_000 : 1_000 + (frameIndex * 397) % 6_000
                if followTarget, !keyframe, let target { size = max(200, Int(target / 8 / 30)) }
                let frame = OutgoingVideoFrame(bytes: frame(keyframe: keyframe, size: size), isKeyframe: keyframe, captureMicros: now)
                frameIndex += 1
                sent.append(Sent(frame: frame, atMicros: now))
                carry(machine.send(frame, nowMicros: now))
                nextFrameMicros = now + 33_333
            }
            try toSender(viewer.tick(nowMicros: now))
        }
        now = max(now, end)
    }

    /// Sends viewer datagrams towards us now.
    func toSender(_ datagrams: [[UInt8]]) throws {
        for datagram in datagrams { transmit(datagram, toViewer: false) }
    }

    /// What the machine said: datagrams onto the link, events recorded (a keyframe request reaches the encoder).
    func carry(_ output: PeerConnectionStateMachine.Output) {
        for datagram in output.datagrams { transmit(datagram, toViewer: true) }
        for event in output.events {
            events.append((now, event))
            if case .keyframeNeeded = event { keyframeWanted = true }
            if case .targetBitrate(let bits) = event { target = bits }
        }
        deadline = output.deadlineMicros
    }

    private func transmit(_ datagram: [UInt8], toViewer: Bool) {
        if recording, toViewer { recorded.append(datagram) }
        let kind = DatagramKind.classify(datagram)
        if kind == .rtp || kind == .rtcp, now >= link.lossFromMicros {
            let loss = toViewer ? link.lossToViewer : link.lossToSender
            if toViewer { exposed.toViewer += 1 } else { exposed.toSender += 1 }
            if loss > 0, Double.random(in: 0..<1, using: &generator) < loss {
                if toViewer { lost.toViewer += 1 } else { lost.toSender += 1 }
                if toViewer, kind == .rtcp { lostRTCPToViewer += 1 }
                return
            }
        }
        var departure = now
        if toViewer, let rate = link.rateToViewer {
            let start = max(now, bottleneckFreeMicros)
            guard Double(start - now) * rate / 8_000_000 <= Double(link.queueBytes) else {
                bottleneckDrops += 1
                return
            }
            bottleneckFreeMicros = start + UInt64(Double(datagram.count) * 8_000_000 / rate)
            departure = bottleneckFreeMicros
        }
        inFlight.append((departure + link.delayMicros, toViewer, datagram))
    }

    /// The frames the machine was given from the first keyframe it admitted on: what the viewer must get.
    var framesFromTheFirstKeyframe: [OutgoingVideoFrame] {
        guard let connected = events.first(where: { $0.event == .connected })?.micros,
              let first = sent.firstIndex(where: { $0.frame.isKeyframe && $0.atMicros >= connected })
        else { return [] }
        return sent[first...].map(\.frame)
    }

    var keyframeRequests: [(micros: UInt64, reason: String)] {
        events.compactMap { entry in
            if case .keyframeNeeded(let reason) = entry.event { return (entry.micros, reason) }
            return nil
        }
    }
}
