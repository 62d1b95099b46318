import DataChannel
import DTLS

// The data channels of ``PeerConnectionStateMachine`` (RFC 8831): SCTP packets ride DTLS application data
// (RFC 8261), one packet a record, in and out of the ``DataChannelSession``.
//
//   DTLS record (application data) ─▶ session.receive ─▶ events ─▶ .dataChannel(event) for the owner
//   usrsctp timer thread ─▶ wake ─▶ owner's queue ─▶ pollDataChannels ─▶ session.poll
//   every step ends with session.takePackets ─▶ DTLS write ─▶ datagrams
extension PeerConnectionStateMachine {
    /// usrsctp's thread said the data channels have something to do (a retransmission, a delayed SACK, a
    /// message): collect it.
    public mutating func pollDataChannels(nowMicros now: UInt64) -> Output {
        var output = Output()
        guard let dataChannels, case .connected = phase else { return output }
        report(dataChannels.poll(), &output)
        sendSCTP(&output)
        return finish(output, now)
    }

    /// Sends a message on an open channel.
    /// - Throws: ``PeerConnectionError/dataChannel(_:)``: no data channels negotiated or not connected
    ///   (``DataChannelError/notConnected``), no such channel, too large for the peer, SCTP's buffer full.
    public mutating func sendDataChannel(_ message: DataChannelEstablishment.Message, on streamID: UInt16, nowMicros now: UInt64) throws(PeerConnectionError) -> Output {
        var output = Output()
        guard let dataChannels, case .connected = phase else { throw .dataChannel(.notConnected) }
        do { try dataChannels.send(message, on: streamID) } catch { throw .dataChannel(error) }
        sendSCTP(&output)
        return finish(output, now)
    }

    /// The data channels' counters, when negotiated.
    public var dataChannelStatistics: DataChannelSession.Statistics? { dataChannels?.statistics }

    /// DTLS is up: the association starts (both sides send INIT).
    mutating func startSCTP(_ output: inout Output, _ now: UInt64) {
        guard let dataChannels else { return }
        do { try dataChannels.start() } catch {
            logger.warning("data channels not started", ["peer": id, "error": error])
            return
        }
        sendSCTP(&output)
    }

    /// The application data DTLS read: SCTP packets for the association.
    mutating func receiveSCTP(_ output: inout Output, _ now: UInt64) {
        guard let dataChannels else { return }
        var events: [DataChannelSession.Event] = []
        dtls.takeApplicationData { packet in events += dataChannels.receive(packet) }
        guard case .connected = phase else { return }
        report(events, &output)
        sendSCTP(&output)
    }

    /// What the association made goes out, a DTLS record each and a datagram each record: RFC 6347 §4.1.1
    /// lets a datagram carry several records, but aiortc reads one record per datagram and would keep the
    /// second buffered, a packet behind from then on (its SACKs arrived a round late, each costing it a
    /// 1-s retransmission timeout).
    mutating func sendSCTP(_ output: inout Output) {
        guard let dataChannels else { return }
        output.datagrams += dtls.takeDatagrams()
        for packet in dataChannels.takePackets() {
            let written = packet.withUnsafeBytes { bytes in Result { () throws(DTLSError) in try dtls.write(bytes) } }
            if case .failure = written { counters.dataChannelWriteErrors += 1 }
            output.datagrams += dtls.takeDatagrams()
        }
    }

    /// The machine ends: the association is aborted (its ABORT goes out while DTLS still can).
    mutating func endSCTP(_ output: inout Output) {
        guard let dataChannels else { return }
        dataChannels.close()
        if case .connected = dtls.state { sendSCTP(&output) }
    }

    /// Logs what happened on the channels and hands it to the owner.
    private func report(_ events: [DataChannelSession.Event], _ output: inout Output) {
        for event in events {
            switch event {
            case .up: logger.info("data channels up", ["peer": id])
            case .lost(let reason): logger.info("data channels ended", ["peer": id, "reason": reason])
            case .opened(let channel):
                logger.info("data channel opened", [
                    "peer": id, "stream": channel.streamID, "label": channel.label, "protocol": channel.protocol,
                    "ordered": channel.reliability.ordered,
                ])
            case .closed(let stream, let reason): logger.info("data channel closed", ["peer": id, "stream": stream, "reason": reason])
            case .refused(let stream, let reason): logger.warning("data channel stream refused", ["peer": id, "stream": stream, "reason": reason])
            case .message: break
            }
            output.events.append(.dataChannel(event))
        }
    }
}
