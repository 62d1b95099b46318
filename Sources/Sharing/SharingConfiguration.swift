public import ICE
internal import PeerConnection
public import RTPSession
public import VideoSource

/// What the hub needs of the shared encoder (`VideoSource` has both).
public protocol SharedEncoderControl: Sendable {
    /// Asks for a keyframe (coalesced by the source).
    func requestKeyframe()
    /// Changes the target bitrate (nil: the configured or size-dependent default).
    func setBitrate(kbps: Int?)
    /// Turns the droppable cadence on with one reference frame in `period` new frames (2…6), or off (nil):
    /// the other frames are non-reference (libvpx `VP8_EFLAG_NO_UPD_LAST | _GF | _ARF | _ENTROPY`), which a slow
    /// viewer's sender may leave out without a keyframe.
    func setDroppableCadence(period: Int?)
}

extension VideoSource: SharedEncoderControl {}

/// How viewers are served.
public struct SharingConfiguration: Sendable {
    /// ICE settings for every viewer: `--ice-address`, `--stun`, `--turn`.
    public var ice: ICEAgent.Configuration
    /// Viewers at once; more are refused with 503.
    public var maxViewers: Int
    /// The lowest bitrate REMB may push the encoder to, kbps.
    public var minimumBitrateKbps: Int
    /// The top of the range: `--bitrate` when given; nil: the source's default for the picture size.
    public var configuredBitrateKbps: Int?
    /// The source's frame rate cap (for the size-dependent default).
    public var maxFramesPerSecond: Double
    public var pacer: PacerQueue.Configuration
    /// How long a viewer waits for the first keyframe before asking again.
    public var keyframeRetryMicros: UInt64
    /// How long no slow viewer must remain before the droppable cadence goes off, µs
    /// (``DroppableCadencePolicy/offHoldMicros``).
    public var droppableOffHoldMicros: UInt64
    /// A droppable cadence kept on from the start whatever the estimates (`--droppable-period`, 2…6; for
    /// measurements); nil: it follows the outliers.
    public var fixedDroppablePeriod: Int?
    /// Unconnected sessions one client address keeps when the call is full (each holds a viewer slot until ICE
    /// connects or its time limit ends it): past this, the address's oldest gives its slot up to a newcomer from
    /// another address, and its own new offers get 429 (``PendingSessions``). While slots are free an address
    /// may hold any number, so a whole office behind one NAT joins at once; one client still cannot keep others
    /// out with offers it never connects (a break-it trial kept all 16 slots for 30 s with 16 POSTs).
    public var maxPendingPerAddress: Int = 4

    /// The unconnected sessions an address keeps when the call is full: ``maxPendingPerAddress``, but at most half
    /// of ``maxViewers`` (at least 1), so that with `--max-viewers 2` one client's two offers it never connects do
    /// not hold both slots (a bad-input trial: every other address got 503 for 30 s, again and again).
    public var pendingFairShare: Int { max(1, min(maxPendingPerAddress, maxViewers / 2)) }
    /// The thresholds of the second encoding (``SecondEncodingPolicy``; it runs when the hub has a factory).
    public var secondEncoding = SecondEncodingPolicy.Settings()
    /// A viewer not heard (no authenticated RTCP or DTLS) this long gets nothing more, µs (RFC 7675 consent,
    /// ``PeerConnection/Configuration/consentLimitMicros``; `--consent-timeout`).
    public var consentLimitMicros: UInt64 = ConsentFreshness.rfc7675LimitMicros
    /// Viewers that offer audio get the call's sound (Opus, ``ViewerHub/sendAudio(_:)``); false: every audio
    /// section is rejected (video only, as before sound).
    public var sendsAudio = false

    public init(
        ice: ICEAgent.Configuration = ICEAgent.Configuration(role: .controlled), maxViewers: Int = 16,
        minimumBitrateKbps: Int = 150, configuredBitrateKbps: Int? = nil, maxFramesPerSecond: Double = 30,
        pacer: PacerQueue.Configuration = .init(), keyframeRetryMicros: UInt64 = 1_000_000,
        droppableOffHoldMicros: UInt64 = DroppableCadencePolicy.defaultOffHoldMicros, fixedDroppablePeriod: Int? = nil
    ) {
        self.ice = ice
        self.maxViewers = maxViewers
        self.minimumBitrateKbps = minimumBitrateKbps
        self.configuredBitrateKbps = configuredBitrateKbps
        self.maxFramesPerSecond = maxFramesPerSecond
        self.pacer = pacer
        self.keyframeRetryMicros = keyframeRetryMicros
        self.droppableOffHoldMicros = droppableOffHoldMicros
        self.fixedDroppablePeriod = fixedDroppablePeriod
    }
}
