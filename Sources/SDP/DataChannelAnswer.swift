/// What an answer agreed for the data channels (RFC 8841): the SCTP association over the BUNDLE transport's
/// DTLS.
public struct NegotiatedDataChannel: Sendable, Equatable {
    /// The application section's mid (in the BUNDLE group with the video).
    public var mid: String
    /// Index of the accepted `m=application` line.
    public var mediaIndex: Int
    /// The peer's SCTP port (`a=sctp-port`, RFC 8841 §5; 5000 when absent).
    public var remotePort: UInt16
    /// The largest message the peer takes (bytes, `a=max-message-size`, RFC 8841 §6: 65536 when absent,
    /// `Int.max` for its 0, "any size").
    public var remoteMaxMessageSize: Int

    public init(mid: String, mediaIndex: Int, remotePort: UInt16, remoteMaxMessageSize: Int) {
        self.mid = mid
        self.mediaIndex = mediaIndex
        self.remotePort = remotePort
        self.remoteMaxMessageSize = remoteMaxMessageSize
    }
}

/// The answer's application section (RFC 8841 §4–6, RFC 8829 §5.3.1): accepts the offer's first
/// `m=application <port ≠ 0> UDP/DTLS/SCTP webrtc-datachannel` (or `TCP/DTLS/SCTP`) that is in the same
/// BUNDLE group as the accepted video, since the data channels ride the video's one transport (RFC 8843).
/// Anything else (no BUNDLE, the old `DTLS/SCTP 5000` form with `a=sctpmap`, a second application section)
/// stays rejected by the answer builder.
///
/// ```
///   m=application 9 UDP/DTLS/SCTP webrtc-datachannel
///   c=IN IP4 0.0.0.0            (our default candidate's address, as the video section)
///   a=ice-ufrag / ice-pwd / fingerprint / setup   (the same as the video section's)
///   a=mid:<the offer's>
///   a=sctp-port:5000
///   a=max-message-size:262144
/// ```
public enum DataChannelAnswer {
    /// Our SCTP port (RFC 8841 §5), the browsers' value.
    public static let sctpPort: UInt16 = 5000
    /// Our `a=max-message-size` (bytes, RFC 8841 §6): 256 KiB, as Chromium and Firefox; the data channel
    /// module's `DataChannelSession.maxMessageSize` is the same number (a test checks).
    public static let maxMessageSize = 262_144
    /// The peer's limit when it states none (RFC 8841 §6.1).
    public static let defaultRemoteMaxMessageSize = 65_536

    /// The accepted section and what it agreed, or nil when the offer has no usable application section in
    /// `bundle` (the offer's BUNDLE group, which must hold the video's mid `videoMid`).
    static func accept(
        _ offer: SessionDescription, bundle: SDPGroup, videoMid: String, local: LocalMediaParameters, setup: DTLSSetup
    ) -> (section: MediaDescription, negotiated: NegotiatedDataChannel)? {
        guard bundle.mids.contains(videoMid) else { return nil }
        guard let index = offer.media.firstIndex(where: { section in
            section.kind == "application" && section.port != 0
                && (section.proto == "UDP/DTLS/SCTP" || section.proto == "TCP/DTLS/SCTP")
                && section.formats == ["webrtc-datachannel"]
        }) else { return nil }
        let offered = offer.media[index]
        guard let mid = offered.mid, bundle.mids.contains(mid) else { return nil }
        let remotePort = offered.otherAttribute("sctp-port").flatMap { UInt16($0) } ?? sctpPort
        let remoteMax: Int
        switch offered.otherAttribute("max-message-size").flatMap({ Int($0) }) {
        case nil: remoteMax = defaultRemoteMaxMessageSize
        case 0: remoteMax = .max
        case let size?: remoteMax = max(size, 1)
        }
        let (port, connection) = local.defaultAddress
        var section = MediaDescription(kind: "application", port: port, proto: offered.proto, formats: ["webrtc-datachannel"], connection: connection)
        section.attributes = local.transportAttributes(setup: setup) + [
            .mid(mid), .other(name: "sctp-port", value: String(sctpPort)),
            .other(name: "max-message-size", value: String(maxMessageSize)),
        ]
        return (section, NegotiatedDataChannel(mid: mid, mediaIndex: index, remotePort: remotePort, remoteMaxMessageSize: remoteMax))
    }
}

extension MediaDescription {
    /// The value of the first `a=<name>:<value>` this parser keeps as ``SDPAttribute/other(name:value:)``.
    func otherAttribute(_ name: String) -> String? {
        for case .other(let attribute, let value) in attributes where attribute == name { return value }
        return nil
    }
}
