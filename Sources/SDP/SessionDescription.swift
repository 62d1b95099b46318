/// A session description (RFC 8866 §5) as WebRTC uses it: the session part, then media descriptions.
///
/// ```
/// v=0                                          version
/// o=- 4611731400430051336 2 IN IP4 127.0.0.1   origin: user, session id, version, net/addr type, address
/// s=-                                          session name
/// t=0 0                                        timing
/// a=group:BUNDLE 0 1                           session attributes
/// m=video 9 UDP/TLS/RTP/SAVPF 96 97            media: type, port, profile, formats
/// c=IN IP4 0.0.0.0                             connection
/// a=…                                          media attributes
/// ```
/// ``SDPParser`` reads one and ``serialized()`` prints it (CRLF line ends); a description parsed and
/// printed keeps every line in its order.
public struct SessionDescription: Sendable, Equatable {
    /// `o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>` (RFC 8866 §5.2).
    public struct Origin: Sendable, Equatable {
        public var username: String
        /// Digits (kept as text: browsers use up to 19 of them).
        public var sessionID: String
        public var sessionVersion: String
        public var networkType: String
        public var addressType: String
        public var address: String

        public init(username: String = "-", sessionID: String, sessionVersion: String, networkType: String = "IN",
                    addressType: String = "IP4", address: String = "127.0.0.1") {
            self.username = username
            self.sessionID = sessionID
            self.sessionVersion = sessionVersion
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }

        public var sdpValue: String {
            "\(username) \(sessionID) \(sessionVersion) \(networkType) \(addressType) \(address)"
        }
    }

    /// `c=<nettype> <addrtype> <connection-address>` (RFC 8866 §5.7).
    public struct Connection: Sendable, Equatable {
        public var networkType: String
        /// `IP4` or `IP6`.
        public var addressType: String
        public var address: String

        public init(networkType: String = "IN", addressType: String = "IP4", address: String) {
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }

        /// `IN IP4 0.0.0.0`: the placeholder of JSEP (RFC 8829 §5.2.1).
        public static let unspecified = Connection(address: "0.0.0.0")

        public var sdpValue: String { "\(networkType) \(addressType) \(address)" }
    }

    /// A line the model does not interpret (`i=`, `u=`, `e=`, `p=`, `r=`, `z=`, `k=`), kept as written.
    public struct OtherLine: Sendable, Equatable {
        public var type: Character
        public var value: String

        public init(type: Character, value: String) {
            self.type = type
            self.value = value
        }
    }

    /// `v=`: always 0.
    public var version: Int = 0
    public var origin: Origin
    /// `s=`: `-` for browsers.
    public var sessionName: String
    /// `i=`, `u=`, `e=`, `p=` lines, printed after `s=`.
    public var informationLines: [OtherLine] = []
    public var connection: Connection?
    /// `b=` values as written.
    public var bandwidths: [String] = []
    /// `t=` values as written: `0 0` for browsers.
    public var timing: [String] = ["0 0"]
    /// `r=`, `z=`, `k=` lines, printed after the `t=` lines.
    public var timingLines: [OtherLine] = []
    public var attributes: [SDPAttribute] = []
    public var media: [MediaDescription] = []

    public init(origin: Origin, sessionName: String = "-", attributes: [SDPAttribute] = [], media: [MediaDescription] = []) {
        self.origin = origin
        self.sessionName = sessionName
        self.attributes = attributes
        self.media = media
    }

    /// The description as text, every line ending CRLF.
    public func serialized() -> String {
        var lines = ["v=\(version)", "o=" + origin.sdpValue, "s=" + sessionName]
        lines += informationLines.map { "\($0.type)=\($0.value)" }
        if let connection { lines.append("c=" + connection.sdpValue) }
        lines += bandwidths.map { "b=" + $0 }
        lines += timing.map { "t=" + $0 }
        lines += timingLines.map { "\($0.type)=\($0.value)" }
        lines += attributes.map { "a=" + $0.sdpText }
        for section in media { lines += section.sdpLines }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    // MARK: Session-level attributes

    /// The `a=group:BUNDLE` group, if any (RFC 8843).
    public var bundleGroup: SDPGroup? {
        for case .group(let group) in attributes where group.semantics == "BUNDLE" { return group }
        return nil
    }

    /// The media section with `a=mid:<mid>`.
    public func media(mid: String) -> MediaDescription? { media.first { $0.mid == mid } }
}

/// One media description: `m=` and the lines up to the next `m=` (RFC 8866 §5.14).
public struct MediaDescription: Sendable, Equatable {
    /// `audio`, `video`, `application`, …
    public var kind: String
    /// 0 marks a rejected (or bundle-only) section; 9 is JSEP's discard-port placeholder.
    public var port: UInt16
    /// The `/<number of ports>` suffix, when written.
    public var portCount: UInt16?
    /// `UDP/TLS/RTP/SAVPF`, `UDP/DTLS/SCTP`, …
    public var proto: String
    /// Payload types for RTP profiles, or e.g. `webrtc-datachannel`.
    public var formats: [String]
    /// `i=` and `k=` lines, kept as written.
    public var otherLines: [SessionDescription.OtherLine] = []
    public var connection: SessionDescription.Connection?
    public var bandwidths: [String] = []
    public var attributes: [SDPAttribute] = []

    public init(kind: String, port: UInt16, proto: String, formats: [String], connection: SessionDescription.Connection? = nil,
                attributes: [SDPAttribute] = []) {
        self.kind = kind
        self.port = port
        self.proto = proto
        self.formats = formats
        self.connection = connection
        self.attributes = attributes
    }

    /// True for RTP profiles (`RTP/AVP`, `UDP/TLS/RTP/SAVPF`, …), whose formats are payload types.
    public var isRTP: Bool { proto.split(separator: "/").contains("RTP") }

    /// The section's lines, `m=` first, without line ends.
    public var sdpLines: [String] {
        var lines = ["m=\(kind) \(port)" + (portCount.map { "/\($0)" } ?? "") + " \(proto) " + formats.joined(separator: " ")]
        lines += otherLines.filter { $0.type == "i" }.map { "i=" + $0.value }
        if let connection { lines.append("c=" + connection.sdpValue) }
        lines += bandwidths.map { "b=" + $0 }
        lines += otherLines.filter { $0.type != "i" }.map { "\($0.type)=\($0.value)" }
        lines += attributes.map { "a=" + $0.sdpText }
        return lines
    }

    // MARK: Attribute views

    public var mid: String? {
        for case .mid(let mid) in attributes { return mid }
        return nil
    }

    /// The direction attribute, `sendrecv` when absent (RFC 8866 §6.7).
    public var direction: MediaDirection {
        for case .direction(let direction) in attributes { return direction }
        return .sendrecv
    }

    public var rtpMaps: [RTPMap] {
        attributes.compactMap { if case .rtpmap(let map) = $0 { map } else { nil } }
    }

    public func rtpMap(payloadType: UInt8) -> RTPMap? { rtpMaps.first { $0.payloadType == payloadType } }

    public func formatParameters(_ format: String) -> FormatParameters? {
        for case .fmtp(let parameters) in attributes where parameters.format == format { return parameters }
        return nil
    }

    /// The `a=rtcp-fb` lines that apply to `payloadType`, including `*` ones.
    public func feedback(payloadType: UInt8) -> [RTCPFeedbackAttribute] {
        attributes.compactMap {
            if case .rtcpFeedback(let feedback) = $0, feedback.payloadType == nil || feedback.payloadType == payloadType {
                feedback
            } else {
                nil
            }
        }
    }

    public var hasRTCPMux: Bool { attributes.contains(.rtcpMux) }
    public var hasReducedSizeRTCP: Bool { attributes.contains(.rtcpReducedSize) }

    public var iceUfrag: String? {
        for case .iceUfrag(let ufrag) in attributes { return ufrag }
        return nil
    }

    public var icePwd: String? {
        for case .icePwd(let pwd) in attributes { return pwd }
        return nil
    }

    public var fingerprints: [Fingerprint] {
        attributes.compactMap { if case .fingerprint(let fingerprint) = $0 { fingerprint } else { nil } }
    }

    public var setup: DTLSSetup? {
        for case .setup(let role) in attributes { return role }
        return nil
    }

    public var candidates: [ICECandidate] {
        attributes.compactMap { if case .candidate(let candidate) = $0 { candidate } else { nil } }
    }

    public var hasEndOfCandidates: Bool { attributes.contains(.endOfCandidates) }

    public var ssrcAttributes: [SSRCAttribute] {
        attributes.compactMap { if case .ssrc(let ssrc) = $0 { ssrc } else { nil } }
    }

    public var ssrcGroups: [SSRCGroup] {
        attributes.compactMap { if case .ssrcGroup(let group) = $0 { group } else { nil } }
    }

    public var extensionMaps: [ExtensionMap] {
        attributes.compactMap { if case .extmap(let map) = $0 { map } else { nil } }
    }
}
