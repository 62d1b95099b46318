public import AudioSource
public import OpusCodec
public import FrameCrypto
public import ICE
import PeerConnection
public import Publishing
public import Signaling
public import Streaming
public import VideoSource

/// Everything a ``Call`` is made from: plain values, no I/O. `screencast-call` builds one from its options;
/// tests build one by hand (the test pattern, loopback, port 0).
public struct CallConfiguration: Sendable {
    /// The shared video source (the call's video track): the agent socket, the fallback source, the VP8
    /// encoder's settings.
    public var source: VideoSourceConfiguration
    /// A file that records every encoded frame in the clear (IVF, ``RecorderOutput``); nil: none.
    public var recordIVF: String?
    /// Seconds between the stats lines on the log (and writes of ``statsFile``), 0 for none.
    public var statsIntervalSeconds: Double = 5
    /// Also write the stats as JSON to this file at each interval and at the end; nil: not.
    public var statsFile: String?
    /// Where the viewer page, WHEP and `/stats` listen; nil: no HTTP server (the viewers output still takes
    /// sessions made in-process).
    public var http: HTTPEndpoint? = .default
    /// True when ``http`` was chosen rather than the default (only the wording of a bind failure changes).
    public var httpExplicit = false
    /// WHEP requests (and `/stats`) need `Authorization: Bearer <token>` (the page takes `?token=`); nil: open.
    public var token: String?
    /// Serve HTTPS with a self-signed certificate made at start (its fingerprint is logged).
    public var https = false
    /// Share mode: print a viewer link per reachable address (with the token), a QR code and the fingerprint.
    public var share = false
    /// Share mode: where the token (when ``token`` is nil) and the HTTPS identity are kept across restarts;
    /// nil: made anew at each start.
    public var shareState: ShareState?
    /// Share mode: make a new kept token even though one is there (`--new-token`): old links stop working.
    public var newShareToken = false
    /// ICE settings for every viewer (the SFU leg takes them as the controlling side).
    public var ice = ICEAgent.Configuration(role: .controlled)
    /// Viewers at once; more are refused with 503.
    public var maxViewers = 16
    /// A viewer (or the SFU) not heard this long gets nothing more and is dropped, seconds (RFC 7675 consent).
    public var consentTimeoutSeconds = Int(ConsentFreshness.rfc7675LimitMicros / 1_000_000)
    /// The lowest bitrate the outputs' estimates may set the encoder to, kbps.
    public var minimumBitrateKbps = 150
    /// A droppable cadence kept on from the start (one reference frame in N, 2…6); nil: it follows a slow viewer.
    public var droppablePeriod: Int?
    /// A transport-cc viewer far below the others gets a second, lower-rate encoding of the same pictures.
    public var secondEncoding = true
    /// Where the SFU leg publishes (WHIP or Janus); nil: no SFU leg.
    public var sfu: (any SFUTransport)?
    /// End-to-end encryption of every frame the viewers and the SFU get; nil: none.
    public var e2ee: E2EESettings?
    /// RTMP destinations and the MP4 recording: outputs of the one H.264 encoding.
    public var streaming = StreamingConfiguration()
    /// The shared audio source: what plays while the agent sends no sound (silence, or a test tone).
    public var audio = AudioSourceConfiguration()
    /// The Opus encoding of that sound (viewers, SFU legs): bitrate, 10/20-ms packets, DTX, in-band FEC.
    public var opus = OpusSettings()

    /// A call of `source` with the defaults of `screencast-call` for everything else.
    public init(source: VideoSourceConfiguration) {
        self.source = source
    }
}

/// End-to-end encryption (FrameCryptor format, AES-128-GCM): the key is PBKDF2 of a passphrase.
public struct E2EESettings: Sendable {
    /// The passphrase read from ``keyFile`` at start (never logged).
    public var passphrase: String
    /// The file the passphrase came from: read again by ``Call/rotateKey()`` (SIGHUP).
    public var keyFile: String
    /// The key derivation's ratchet salt.
    public var salt: String
    /// The first key index, 0…15.
    public var keyIndex: Int

    /// The settings of one end-to-end encryption: `passphrase` (as read from `keyFile`), the PBKDF2 `salt`
    /// (webrtc-sdk's default unless `--e2ee-salt`), and the first key index (0…15).
    public init(passphrase: String, keyFile: String, salt: String = FrameKey.defaultSalt, keyIndex: Int = 0) {
        self.passphrase = passphrase
        self.keyFile = keyFile
        self.salt = salt
        self.keyIndex = keyIndex
    }
}

/// The outputs of the H.264 encoding (issue 29): RTMP destinations and an MP4 recording.
public struct StreamingConfiguration: Sendable {
    /// Where to publish FLV over RTMP, each an output of its own (`rtmp-1`, `rtmp-2`, …).
    public var rtmp: [RTMPURL] = []
    /// Failed connection attempts in a row before a destination gives up; 0: never.
    public var retries = 5
    /// The H.264 target, bits per second; nil: width × height × fps × 0.08.
    public var bitsPerSecond: Int?
    /// A fragmented MP4 file of the H.264 encoding; nil: none.
    public var recordMP4: String?
    /// A WebM file of the VP8 and Opus encodings as the viewers get them (no re-encoding); nil: none.
    public var recordWebM: String?

    /// No destination, no recording; the defaults above.
    public init() {}

    /// Whether any output needs the H.264 encoding.
    public var needsH264: Bool { !rtmp.isEmpty || recordMP4 != nil }
}
