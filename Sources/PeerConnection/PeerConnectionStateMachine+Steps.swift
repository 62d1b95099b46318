import DTLS
import ICE
import RTP
import RTPSession
import ScreencastSupport
import SRTP

// The steps every event of ``PeerConnectionStateMachine`` is made of: DTLS in and out, SRTP keying, SRTCP in,
// the sender chain's outcomes, the pacer's release, consent (RFC 7675), the end, and `finish`, where every
// event's output is completed.
extension PeerConnectionStateMachine {

    /// Runs one DTLS step and queues what it produced; a failed step (its alert queued too) ends the
    /// connection. Returns false when it failed.
    @discardableResult
    mutating func stepDTLS(_ output: inout Output, _ now: UInt64, _ step: (DTLSEndpoint) throws(DTLSError) -> Void) -> Bool {
        do {
            try step(dtls)
        } catch {
            output.datagrams += dtls.takeDatagrams()
            end("DTLS: \(error)", failed: true, &output)
            return false
        }
        output.datagrams += dtls.takeDatagrams()
        return true
    }

    /// After DTLS input: key SRTP once connected (the sender chain starts); end on close_notify or failure.
    mutating func checkDTLS(_ output: inout Output, _ now: UInt64) {
        switch dtls.state {
        case .connected(let keys):
            guard case .connecting = phase else { return }
            let sender: SRTPSender, receiver: SRTPReceiver
            do {
                sender = try SRTPSender(key: keys.writeKey(of: negotiated.dtlsRole))
                receiver = try SRTPReceiver(key: keys.writeKey(of: negotiated.dtlsRole.peer))
            } catch {
                end("SRTP: \(error)", failed: true, &output)
                return
            }
            phase = .connected(sender: sender, receiver: receiver)
            connectedMicros = now
            consent = ConsentFreshness(limitMicros: consentLimitMicros, graceMicros: consentGraceMicros, nowMicros: now)
            logger.info("peer connected", [
                "peer": id, "srtp": keys.profile.description, "after.ms": (now - createdMicros) / 1000,
                "pair": selectedPair.map { "\($0.remote.address):\($0.remote.port)" } ?? "-",
                "transport": selectedPair?.transport ?? "-",
            ])
            output.events.append(.connected)
            apply(rtp.start(nowMicros: now, sendsMedia: negotiated.direction == .sendonly), &output, now)
            startSCTP(&output, now)
            audio?.start(nowMicros: now)
        case .closed(byPeer: true):
            end("DTLS close_notify from the peer", failed: false, &output)
        case .failed(let error):
            end("DTLS: \(error)", failed: true, &output)
        case .idle, .handshaking, .closed(byPeer: false): break
        }
    }

    /// SRTCP from the peer: unprotected (libsrtp checks the tag and the replay window), parsed, read by the
    /// sender chain. A packet refused at any step is counted by why and dropped; it never ends the peer.
    mutating func receiveRTCP(_ datagram: [UInt8], _ output: inout Output, _ now: UInt64, _ wallClock: NTPTimestamp) {
        guard case .connected(_, let receiver) = phase else {
            counters.dropped.rtcpBeforeKeys += 1
            return
        }
        var packet = datagram
        do {
            try receiver.unprotectRTCP(&packet)
        } catch {
            counters.dropped.countSRTCP(error)
            return
        }
        renewConsent(&output, now)  // authenticated: only the peer holds its SRTCP key
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parseCompound(packet)
        } catch {
            counters.dropped.rtcpMalformed += 1
            return
        }
        counters.rtcpPackets += 1
        audio?.receive(packets)
        apply(rtp.receive(packets, compound: packet, nowMicros: now, arrival: wallClock), &output, now)
    }

    /// Carries out what the sender chain asked for: RTCP to send, a keyframe, the REMB estimate, goodbye.
    mutating func apply(_ outcome: SenderOutcome, _ output: inout Output, _ now: UInt64) {
        if case .connected(let sender, _) = phase {
            for var packet in outcome.rtcp {
                do {
                    try sender.protectRTCP(&packet)
                    output.datagrams.append(packet)
                } catch {
                    counters.srtpErrors += 1
                }
            }
        }
        if outcome.pacerOverflowed {
            logger.warning("pacer overflow: waiting for a keyframe", ["peer": id, "queued": rtp.pacer.queuedBytes])
        }
        if let reason = outcome.keyframeRequest { output.events.append(.keyframeNeeded(reason: reason.rawValue)) }
        if let bitrate = outcome.estimatedBitrate { output.events.append(.estimatedBitrate(bitrate)) }
        if let target = outcome.targetBitrate { output.events.append(.targetBitrate(target)) }
        if outcome.goodbye { end("RTCP BYE from the peer", failed: false, &output) }
    }

    /// Sends what the pacer lets go now, protected in place (the chain reserved the trailer's room).
    mutating func pump(_ output: inout Output, _ now: UInt64) {
        guard case .connected(let sender, _) = phase else { return }
        var packets = rtp.release(nowMicros: now, reserving: sender.profile.rtpOverhead)
        for index in packets.indices {
            do {
                try sender.protectRTP(&packets[index].bytes)
            } catch {
                counters.srtpErrors += 1
                continue
            }
            output.datagrams.append(packets[index].bytes)
            // A frame's last packet left: its capture → sent latency (`/stats`; a debug line per frame).
            if let (capture, latency) = packets[index].frameLatency, logger.threshold <= .debug {
                logger.debug("frame sent", ["peer": id, "capture_us": capture, "sent_us": capture + latency, "latency_us": latency])
            }
        }
    }

    mutating func end(_ reason: String, failed: Bool, _ output: inout Output) {
        guard !isEnded else { return }
        phase = .ended(reason: reason, failed: failed)
        endSCTP(&output)
        dtls.close()
        output.datagrams += dtls.takeDatagrams()
        rtp.stop()
        audio?.stop()
        logger.log(failed ? .warning : .info, "peer ended", [
            "peer": id, "reason": reason, "frames": rtp.stream.statistics.framesSent,
            "bytes": counters.bytesOut + output.datagrams.reduce(0) { $0 + $1.count },
        ])
        output.events.append(.closed(reason: reason, failed: failed))
    }

    /// The peer proved it is there: a lapsed consent comes back, and media resumes with a keyframe on a
    /// congestion controller started afresh (``RTPSenderChain/routeChanged(nowMicros:)``: the outage drove
    /// its target to the floor).
    mutating func renewConsent(_ output: inout Output, _ now: UInt64) {
        guard case .connected = phase, consent?.renewed(nowMicros: now) == .renewed else { return }
        logger.info("consent renewed", ["peer": id])
        output.events.append(.keyframeNeeded(reason: "consent renewed"))
        apply(rtp.routeChanged(nowMicros: now), &output, now)
    }

    /// Counts the peer's silence: a lapse stops sending and tells the owner; an expiry ends the peer.
    mutating func checkConsent(_ output: inout Output, _ now: UInt64) {
        guard case .connected = phase, var consent else { return }
        let change = consent.advance(nowMicros: now)
        self.consent = consent
        switch change {
        case .lapsed:
            logger.warning("consent lapsed: nothing sent until the peer is heard", ["peer": id, "silent.s": consent.silentMicros / 1_000_000])
            output.events.append(.iceConnectionFailed)
        case .expired:
            end("consent expired (RFC 7675): nothing authenticated from the peer for \(consent.silentMicros / 1_000_000) s", failed: true, &output)
        case .none, .renewed: break
        }
    }

    /// Every event ends here: consent is checked, what the pacer allows leaves (nothing while consent has
    /// lapsed, RFC 7675 §5.1), and the next deadline is set.
    mutating func finish(_ output: Output, _ now: UInt64) -> Output {
        var output = output
        checkConsent(&output, now)
        if let consent, consent.phase != .fresh {
            counters.heldByConsent += output.datagrams.count
            output.datagrams.removeAll()
        } else if !isEnded {
            pump(&output, now)
        }
        counters.datagramsOut += output.datagrams.count
        for datagram in output.datagrams { counters.bytesOut += datagram.count }
        if !isEnded {
            output.deadlineMicros = RTPSenderChain.earlier(
                RTPSenderChain.earlier(dtls.nextTimeout, rtp.nextDeadlineMicros(nowMicros: now)),
                RTPSenderChain.earlier(consent?.deadlineMicros, audio?.nextDeadlineMicros))
        }
        return output
    }
}
