public import PeerConnection

/// What the publisher needs of one kind of SFU: open a session with our offer (returning the answer),
/// close it. ``WHIPTransport`` (RFC 9725) and the Janus VideoRoom implement it; both block their caller.
public protocol SFUTransport: Sendable {
    /// Where we publish (for logs and `/stats`): the endpoint URL, with the room for Janus.
    var server: String { get }
    /// Opens a session with `offer`; returns the SDP answer and a handle for ``close(_:)``. `lost` is
    /// called (at most once, from any thread) when the server side of the session is seen to end before
    /// the media does: Janus killed (its long poll refused), the session timed out (458), a hangup.
    func open(
        offer: String, log: @escaping @Sendable (String) -> Void, lost: @escaping @Sendable (String) -> Void
    ) throws(PublishingError) -> (answer: String, session: any Sendable)
    /// Ends a session opened by ``open(offer:log:)`` (best effort: errors are the caller's to log).
    func close(_ session: any Sendable) throws(PublishingError)
    /// Restarts ICE on a live session: sends our restart fragment, returns the server's and the session
    /// (updated: a new entity tag). Blocks.
    /// - Throws: ``PublishingError/iceRestartUnsupported(server:)`` where the transport has none (Janus
    ///   here), or the exchange's errors; the caller then publishes anew.
    func restartICE(_ session: any Sendable, fragment: ICERestartFragment, payloadType: UInt8) throws(PublishingError)
        -> (answer: ICERestartFragment, session: any Sendable)
    /// Ends the requests in flight now (the call is stopping); requests made after it run as usual.
    func cancelInFlight()
}

extension SFUTransport {
    public func restartICE(_ session: any Sendable, fragment: ICERestartFragment, payloadType: UInt8) throws(PublishingError)
        -> (answer: ICERestartFragment, session: any Sendable)
    {
        throw .iceRestartUnsupported(server: server)
    }
}

/// WHIP as an ``SFUTransport``: POST the offer, PATCH an ICE restart, DELETE the session. WHIP has no event channel: a
/// server that goes away is noticed by ICE consent and DTLS.
public struct WHIPTransport: SFUTransport {
    public let client: WHIPClient
    public var server: String { client.endpoint }

    public init(client: WHIPClient) { self.client = client }

    public func open(
        offer: String, log: @escaping @Sendable (String) -> Void, lost: @escaping @Sendable (String) -> Void
    ) throws(PublishingError) -> (answer: String, session: any Sendable) {
        let session = try client.publish(offer: offer)
        log("WHIP session \(session.url) (ICE servers from Link: \(session.iceServers.stun.count) STUN, \(session.iceServers.turn.count) TURN)")
        return (session.answer, session)
    }

    public func close(_ session: any Sendable) throws(PublishingError) {
        guard let session = session as? WHIPSession else { return }
        try client.delete(session)
    }

    public func cancelInFlight() { client.http.cancellation.cancelInFlight() }

    /// PATCH with the restart fragment (RFC 9725 §4.3.3, ``WHIPClient/restartICE(_:fragment:payloadType:)``).
    public func restartICE(_ session: any Sendable, fragment: ICERestartFragment, payloadType: UInt8) throws(PublishingError)
        -> (answer: ICERestartFragment, session: any Sendable)
    {
        guard let session = session as? WHIPSession else { throw .iceRestartUnsupported(server: server) }
        let (answer, updated) = try client.restartICE(session, fragment: fragment, payloadType: payloadType)
        return (answer.fragment, updated)
    }
}
