import AudioSource
import Call
import OpusCodec
import FrameCrypto
import FrameSocket
import Glibc
import Media
import PeerConnection
import ScreencastSupport
import Signaling
import VideoSource
import ICE
import Publishing

/// The parsed command line of `screencast-call`.
struct CallOptions {
    var source: VideoSourceConfiguration
    var recordIVF: String?
    var statsIntervalSeconds: Double
    var statsFile: String?
    var logLevel: LogLevel
    /// `--log-format`: key=value lines (text, the default) or JSON Lines.
    var logFormat: LogFormat = .text
    /// `--http`: where the viewer page and WHEP listen; nil with `--http off`.
    var http: HTTPEndpoint?
    /// True when `--http` was given (a bind failure is then fatal; on the default it is a warning).
    var httpExplicit: Bool
    var token: String?
    /// `--https` (or `--share`): serve the page, WHEP and /stats over HTTPS with a self-signed certificate made
    /// at start.
    var https: Bool
    /// `--share`: listen beyond loopback (0.0.0.0:8443 unless `--http` says otherwise), with a fresh random
    /// token unless `--token` gives one, and print ready viewer links.
    var share: Bool
    /// `--share`: where the token and certificate are kept across restarts (nil: no HOME or XDG_STATE_HOME).
    var shareState: ShareState?
    /// `--new-token`: a new kept token.
    var newToken: Bool
    var ice: ICEAgent.Configuration
    var maxViewers: Int
    /// `--consent-timeout`: seconds without an authenticated packet from a peer before its consent lapses.
    var consentTimeoutSeconds: Int
    var minimumBitrateKbps: Int
    /// `--droppable-period N`: the droppable cadence kept on from the start (nil: it follows a slow viewer).
    var droppablePeriod: Int?
    /// `--second-encoding on|off` (default on): a viewer far below the others gets a second, lower-rate encoding.
    var secondEncoding = true
    /// `--whip` / `--janus`: the SFU leg (nil: none).
    var sfu: (any SFUTransport)?
    /// `--e2ee-key-file` and its companions; nil: frames are not end-to-end encrypted.
    var e2ee: E2EEOptions?
    /// `--rtmp`, `--record` and their companions: the H.264 outputs.
    var streaming = StreamingConfiguration()
    /// `--audio-bitrate`, `--audio-frame-ms`, `--audio-test-tone`: the Opus encoding and the idle sound.
    var sound = (audio: AudioSourceConfiguration(), opus: OpusSettings())

    static let usage = """
        Usage: screencast-call [options]
               screencast-call status | kick ID | pause | resume [--share] [--http HOST:PORT] [--token T]

        Receives the agent's frames on a Unix socket, keeps the call's one shared video source and encodes
        it as VP8 (libvpx, real time). When no agent is connected, --source decides what feeds the source;
        when an agent's first picture arrives, the screen takes over, and when it leaves the source falls
        back.

        Options:
          --socket PATH            the agent socket (default $XDG_RUNTIME_DIR/screencast/agent.sock,
                                   else /tmp/screencast-$UID/agent.sock)
          --source KIND            what feeds the source with no agent: screen (nothing; default),
                                   testpattern, or file:PATH (a .frames dump, looping)
          --bitrate KBPS           VP8 target bitrate, 1-1000000 (default: width x height x fps x 0.08 bits,
                                   clamped to 150-8000 kbps, following the picture size)
          --max-fps N              encode at most N new frames a second, 0.1-240 (default 30)
          --min-fps N              as the target bitrate falls, or the content proves costlier than the
                                   target carries, the frame rate is lowered first, down to N, 0.1-240 and
                                   at most --max-fps (default 5); only below that does the quantizer floor
                                   rise (text stays sharp; /stats "rate": fpsCap, q, budgetBytes,
                                   bitsPerPixel)
          --keyframe-spacing S     requested keyframes (new viewer, PLI, FIR) at most one per S seconds,
                                   0-60 (default 1; wider, up to 2 s, when a keyframe is large for the
                                   target); requests in between are coalesced (/stats "keyframeRequests")
          --keyframe-interval S    a keyframe at least every S seconds, 0.1-3600 (default: only on
                                   request)
          --cpu-used N             libvpx speed, -16 to -1 (-16 the fastest; default -6); positive values
                                   are refused
          --min-q N, --max-q N     libvpx quantizer range, 0-63 (default 12 and 56); at low targets the rate
                                   policy raises the floor and lets libvpx use up to 63
          --encoder-threads N|auto libvpx threads, 1-16 (default auto: 1, or more only when cores are
                                   idle at start — never on a 2-core machine)
          --max-encode-size WxH    pictures larger than this are downscaled (keeping their aspect ratio)
                                   before they are encoded; a portrait picture fits it turned (default
                                   3840x2160)
          --max-decode-pixels N    JPEGs with more pixels than this (N, or WxH; 1 to 16384x16384) are
                                   dropped unread (default 7680x4320 = 33177600)
          --pattern-size WxH       test pattern size (default 1280x720)
          --pattern-fps N          test pattern rate, 0.1-240 (default 30)
          --record-ivf FILE        write every encoded frame to an IVF file (ffprobe/ffmpeg play it)
          --stats-interval S       a stats line on stderr every S seconds, 0.1 to 86400, or 0 for none
                                   (default 5)
          --stats-file FILE        also write the stats as JSON to FILE at each interval and at exit
          --watchdog S             drop an agent that completes no frame for S seconds, 0.1-3600
                                   (default 5)
          --exit-when-source-ends  exit 0 once the first agent's stream has ended (with --source file: once
                                   the file has played once) and everything is flushed
          --log-level LEVEL        debug, info, warn or error (default info); logs go to stderr
          --log-format text|json   log lines as 'level component message key=value…' (text, default) or
                                   one JSON object a line: time, level, logger, message, fields
          --config FILE            settings as 'option = value' lines (TOML: "text", 12, true, ["a", "b"]
                                   for a repeated option; default $XDG_CONFIG_HOME/screencast/call.toml,
                                   else ~/.config/screencast/call.toml, when it exists); the command
                                   line overrides them
          --print-config           print the settings in effect (file and command line) and exit
          -h, --help               this text
          --version                print the version

        Viewers (WebRTC over WHEP; the viewer page is at http://HOST:PORT/):
          --http HOST:PORT         where the viewer page, WHEP (/whep) and /stats listen (default
                                   127.0.0.1:8080; [ADDR]:PORT for IPv6; port 0 picks a free one; 'off' for
                                   none). Beyond loopback only when asked: 0.0.0.0:8080
          --token T                WHEP requests need 'Authorization: Bearer T' (the page takes ?token=T)
          --https                  serve the page, WHEP and /stats over HTTPS, with a self-signed
                                   certificate made at start (its SHA-256 fingerprint is logged and printed)
          --share                  share with other machines in one step: --https, --http 0.0.0.0:8443
                                   (unless --http is given), a random token (unless --token is given);
                                   prints a viewer link per address it listens on (IPv4 ones with 0.0.0.0; a
                                   QR code when qrencode is installed), then a line per viewer joining and
                                   leaving. The token and the self-signed certificate are kept for the
                                   next start in $XDG_STATE_HOME/screencast (else
                                   ~/.local/state/screencast, files 0600): a restart keeps links working
          --new-token              with --share: make a new kept token (old links stop working)
          --ice-address ADDR       gather ICE host candidates on this local address only (repeatable;
                                   default: every address libnice finds, which skips loopback)
          --remote-candidates any|private|loopback
                                   which viewers' ICE candidates are checked and sent to (default: loopback
                                   when every --ice-address is loopback, else any); others are refused
          --stun HOST:PORT         add a server-reflexive candidate from this STUN server
          --ice-ports MIN-MAX      local UDP and TCP ports for ICE host candidates (default: any)
          --ice-tcp on|off         TCP candidates beside UDP for viewers whose network blocks UDP (ICE-TCP,
                                   RFC 6544; default on); UDP pairs win when both work
          --turn URL               add relayed candidates: turn:[USER:PASS@]HOST[:PORT][?transport=udp|tcp]
                                   (or turns:); repeatable
          --max-viewers N          viewers at once, 1-256 (default 16); more get 503
          --consent-timeout S      a viewer (or the SFU) not heard for S seconds (no RTCP or DTLS that
                                   authenticates) gets nothing more (RFC 7675 consent) and is dropped 5 s
                                   later, 2-300 (default 30, as in RFC 7675); time in which the call
                                   itself did not run (SIGSTOP) is not counted
          --min-bitrate KBPS       the lowest bitrate viewers' REMB estimates may set, 1-1000000 (default
                                   150, or --bitrate when that is lower);
                                   the highest is --bitrate, or the default for the picture size
          --droppable-period N     keep one reference frame in N (2-6) from the start, the others
                                   non-reference, whatever the viewers' estimates (for measurements; by
                                   default this cadence is on only while a transport-cc viewer is far
                                   below the others, whose frames it lets the sender thin without keyframes)
          --scale-down on|off      when the target cannot carry the picture at --min-fps, encode it smaller
                                   (3/4, then 1/2 of each side, never below 360 lines) and back to full
                                   size when the target allows (default on; off keeps the size and raises
                                   the quantizer instead)
          --second-encoding on|off a transport-cc viewer far below the others (under half the highest
                                   estimate for 2 s) gets a second, lower-rate VP8 encoding of the same
                                   screen (half size when its rate is far below what full size needs),
                                   started while such a viewer exists (default on)
        \(SFUOptions.usage)
        \(StreamingOptions.usage)
        \(SoundOptions.usage)

        End-to-end encryption (only viewers with the passphrase see the picture; see README):
          --e2ee-key-file FILE     encrypt every encoded frame once for all viewers (webrtc-sdk FrameCryptor
                                   format, AES-128-GCM, key = PBKDF2 of the passphrase): FILE holds the
                                   passphrase on one line and must not be accessible to group or others
                                   (chmod 600). Viewers give it to the page as #key=PASSPHRASE or type it
                                   in. The --record-ivf file keeps the clear frames.
          --e2ee-salt S            the key derivation's ratchet salt (default LKFrameEncryptionKey)
          --e2ee-key-index N       the first key index, 0-15 (default 0)

        SIGINT/SIGTERM: stop, flush and close the recordings (--record-ivf, --record), remove the socket
        file, exit 0 (1 if a recording was not written completely: a full disk).
        SIGHUP: with --e2ee-key-file, read FILE again and move to the next key index, starting at a keyframe
        (a bad file is logged and the current key kept); without it, stop as on SIGTERM.
        Exit codes: 0 done; 64 bad usage, when the command line must change: an unknown option, a bad value,
        a file that is not there or cannot be used as asked (--source file:, --e2ee-key-file, the folder of
        --record-ivf, --record or --stats-file, a --socket whose folder's parent is missing or that names a
        non-socket file); 1 a runtime failure: the socket or HTTP port in use, a dump that does not
        decode, a recording not written completely, ….
        Subcommands: status (who watches, each output's state), kick ID, pause, resume: of the call
        running on this machine (--http or --share as it was started); see the README, "The sharer's view".
        """

    /// The options that take a value, and the switches (also the keys of the config file, ``ProgramSettings``).
    static let valueOptions: Set<String> = Set([
                "socket", "source", "bitrate", "max-fps", "min-fps", "keyframe-spacing", "keyframe-interval", "cpu-used", "min-q", "max-q",
                "encoder-threads", "pattern-size", "pattern-fps", "record-ivf", "stats-interval", "stats-file",
                "watchdog", "log-level", "log-format", "max-encode-size", "max-decode-pixels", "http", "token", "ice-address", "remote-candidates", "ice-ports", "ice-tcp", "stun", "turn", "max-viewers", "consent-timeout", "min-bitrate",
                "droppable-period", "second-encoding", "scale-down",
                "e2ee-key-file", "e2ee-salt", "e2ee-key-index",
            ]).union(SFUOptions.valueOptions).union(StreamingOptions.valueOptions).union(SoundOptions.valueOptions)
    static let flagOptions: Set<String> = Set(["exit-when-source-ends", "https", "share", "new-token"]).union(SFUOptions.flagOptions)

    init(_ words: [String]) throws(UsageError) {
        let arguments = try CommandLineArguments(words, options: Self.valueOptions, flags: Self.flagOptions)
        _ = try arguments.positionals(exactly: 0, names: "")

        let socket: SocketPath
        do {
            if let text = arguments.string("socket") { socket = try SocketPath(text) } else { socket = try SocketPath.defaultPath() }
        } catch {
            throw UsageError("--socket: \(error)")
        }
        if arguments.string("socket") != nil, let reason = socket.unservableReason { throw UsageError("--socket: \(reason)") }

        let maxFPS = try arguments.double("max-fps", in: 0.1...240) ?? 30
        let minFPS = try arguments.double("min-fps", in: 0.1...240) ?? min(5, maxFPS)
        guard minFPS <= maxFPS else {
            func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
            throw UsageError("--min-fps (\(text(minFPS))) must not exceed --max-fps (\(text(maxFPS)))")
        }
        let keyframeSpacing = try arguments.double("keyframe-spacing", in: 0...60) ?? 1
        let patternFPS = try arguments.double("pattern-fps", in: 0.1...240) ?? 30
        var pattern = TestPatternSettings(framesPerSecond: patternFPS)
        if let size = arguments.string("pattern-size") {
            let parts = size.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
                  (16...7680).contains(w), (16...4320).contains(h) else {
                throw UsageError("--pattern-size must be WxH within 16x16...7680x4320, not '\(size)'")
            }
            pattern.width = w
            pattern.height = h
        }
        let exitWhenEnds = arguments.has("exit-when-source-ends")
        let fallback: FallbackSource
        switch arguments.string("source") ?? "screen" {
        case "screen": fallback = .none
        case "testpattern": fallback = .testPattern(pattern)
        case let text where text.hasPrefix("file:") && text.count > 5:
            let path = String(text.dropFirst(5))
            try PathArgument.readableFile(path, option: "--source")  // missing: bad usage, as a key file
            fallback = .file(path: path, loop: !exitWhenEnds)
        case let text:
            throw UsageError("--source must be screen, testpattern or file:PATH, not '\(text)'")
        }

        let minQ = try arguments.int("min-q", in: 0...63) ?? 12
        let maxQ = try arguments.int("max-q", in: 0...63) ?? 56
        guard minQ <= maxQ else { throw UsageError("--min-q (\(minQ)) must not exceed --max-q (\(maxQ))") }
        if let text = arguments.string("cpu-used"), let value = Int(text), value >= 0 {
            throw UsageError("--cpu-used must be negative (-16...-1): positive values select libvpx's auto-speed")
        }
        let keyframeInterval = try arguments.double("keyframe-interval", in: 0.1...3600)

        var maxEncodeSize = VideoSourceConfiguration.defaultMaximumEncodeSize
        if let text = arguments.string("max-encode-size") {
            guard let size = PictureSize(parsing: text), (16...16384).contains(size.width), (16...16384).contains(size.height) else {
                throw UsageError("--max-encode-size must be WxH within 16x16...16384x16384, not '\(text)'")
            }
            maxEncodeSize = size
        }
        var maxDecodePixels = VideoSourceConfiguration.defaultMaximumDecodePixels
        if let text = arguments.string("max-decode-pixels") {
            let size = PictureSize(parsing: text)
            let count = text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) && text.count <= 10 ? Int(text) : nil
            let sidesFit = size.map { $0.width <= 16384 && $0.height <= 16384 } ?? true
            guard sidesFit, let pixels = size?.pixels ?? count, (1...16384 * 16384).contains(pixels) else {
                throw UsageError("--max-decode-pixels must be a pixel count or WxH from 1 to 16384x16384, not '\(text)'")
            }
            maxDecodePixels = pixels
        }

        source = VideoSourceConfiguration(
            socketPath: socket, fallback: fallback,
            bitrateKbps: try arguments.int("bitrate", in: 1...1_000_000),
            maxFramesPerSecond: maxFPS, minFramesPerSecond: minFPS, keyframeIntervalSeconds: keyframeInterval,
            keyframeMinSpacingSeconds: keyframeSpacing,
            cpuUsed: try arguments.int("cpu-used", in: -16 ... -1) ?? -6,
            minQuantizer: minQ, maxQuantizer: maxQ,
            encoderThreads: arguments.string("encoder-threads") == "auto"
                ? EncoderThreads.automaticForThisMachine()
                : try arguments.int("encoder-threads", in: 1...16) ?? EncoderThreads.automaticForThisMachine(),
            watchdogSeconds: try arguments.double("watchdog", in: 0.1...3600) ?? 5,
            endWhenSourceEnds: exitWhenEnds, maximumDecodePixels: maxDecodePixels, maximumEncodeSize: maxEncodeSize)
        switch arguments.string("scale-down") {
        case nil, "on": source.scaleDownWhenStarved = true
        case "off": source.scaleDownWhenStarved = false
        case let other?: throw UsageError("--scale-down must be on or off, not '\(other)'")
        }
        recordIVF = arguments.string("record-ivf")
        if let path = recordIVF { try PathArgument.writableFile(path, option: "--record-ivf") }
        if let path = recordIVF, path.isEmpty { throw UsageError("--record-ivf needs a file name") }
        statsIntervalSeconds = try arguments.statsInterval() ?? 5
        statsFile = arguments.string("stats-file")
        if let path = statsFile { try PathArgument.writableFile(path, option: "--stats-file") }
        let levelName = arguments.string("log-level") ?? "info"
        guard let level = LogLevel(name: levelName) else {
            throw UsageError("--log-level must be debug, info, warn or error, not '\(levelName)'")
        }
        logLevel = level
        logFormat = try arguments.logFormat() ?? .text

        share = arguments.has("share")
        https = share || arguments.has("https")
        let httpText = arguments.string("http")
        httpExplicit = httpText != nil
        if httpText == "off" {
            guard !https else { throw UsageError("--\(share ? "share" : "https") needs the page: it cannot go with --http off") }
            http = nil
        } else if let httpText {
            do { http = try HTTPEndpoint(parsing: httpText) } catch { throw UsageError("--http: \(error)") }
        } else {
            http = share ? HTTPEndpoint(host: "0.0.0.0", port: 8443) : .default
        }
        token = arguments.string("token")
        // On the bytes: a Character test can miss a CR that a combining mark follows (see HTTPResponseHead).
        if let token, token.isEmpty || token.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw UsageError("--token must be non-empty without spaces or control characters")
        }
        newToken = arguments.has("new-token")
        if newToken, !share { throw UsageError("--new-token goes with --share (the token it keeps)") }
        shareState = share ? ShareState.defaultFolder().map(ShareState.init(folder:)) : nil
        if share, token == nil, shareState == nil { token = ShareLinks.freshToken() }
        var ice = ICEAgent.Configuration(role: .controlled)
        for address in arguments.strings("ice-address") {
            guard Self.isIPLiteral(address) else { throw UsageError("--ice-address must be an IP address, not '\(address)'") }
            if let problem = Self.bindProblem(address) {
                throw UsageError("--ice-address \(address) is not an address of this machine (\(problem)); `ip -brief address` lists them")
            }
            ice.localAddresses.append(address)
        }
        if let policy = arguments.string("remote-candidates") {
            guard let value = RemoteCandidatePolicy(rawValue: policy) else {
                throw UsageError("--remote-candidates must be any, private or loopback, not '\(policy)'")
            }
            ice.remoteCandidatePolicy = value
        }
        if let stun = arguments.string("stun") {
            do { ice.stunServer = try ICEServerAddress(parsing: stun) } catch { throw UsageError("--stun: \(error)") }
        }
        if let ports = arguments.string("ice-ports") {
            let parts = ports.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let low = UInt16(parts[0]), let high = UInt16(parts[1]), low > 0, low <= high else {
                throw UsageError("--ice-ports must be MIN-MAX within 1-65535, not '\(ports)'")
            }
            ice.portRange = low...high
        }
        switch arguments.string("ice-tcp") {
        case nil, "on": ice.iceTCP = true
        case "off": ice.iceTCP = false
        case let other?: throw UsageError("--ice-tcp must be on or off, not '\(other)'")
        }
        for url in arguments.strings("turn") {
            ice.turnServers.append(try Self.turnServer(url))
        }
        self.ice = ice
        maxViewers = try arguments.int("max-viewers", in: 1...256) ?? 16
        consentTimeoutSeconds = try arguments.int("consent-timeout", in: 2...300) ?? Int(ConsentFreshness.rfc7675LimitMicros / 1_000_000)
        // The default floor (150) gives way to a lower --bitrate; a --min-bitrate given above it is an error.
        let givenMinimum = try arguments.int("min-bitrate", in: 1...1_000_000)
        minimumBitrateKbps = givenMinimum ?? min(150, source.bitrateKbps ?? 150)
        droppablePeriod = try arguments.int("droppable-period", in: 2...6)
        switch arguments.string("second-encoding") {
        case nil, "on": secondEncoding = true
        case "off": secondEncoding = false
        case let other?: throw UsageError("--second-encoding must be on or off, not '\(other)'")
        }
        if let maximum = source.bitrateKbps, maximum < minimumBitrateKbps {
            throw UsageError("--min-bitrate (\(minimumBitrateKbps)) must not exceed --bitrate (\(maximum))")
        }
        e2ee = try E2EEOptions(arguments)
        sfu = try SFUOptions.transport(arguments, bitrateKbps: source.bitrateKbps)
        streaming = try StreamingOptions.configuration(arguments)
        sound = try SoundOptions.settings(arguments)
    }

    /// The call these options describe; `passphrase` is the one read from `--e2ee-key-file` (nil without).
    func configuration(passphrase: String?) -> CallConfiguration {
        var call = CallConfiguration(source: source)
        call.recordIVF = recordIVF
        call.statsIntervalSeconds = statsIntervalSeconds
        call.statsFile = statsFile
        call.http = http
        call.httpExplicit = httpExplicit
        call.token = token
        call.https = https
        call.share = share
        call.shareState = shareState
        call.newShareToken = newToken
        call.ice = ice
        call.maxViewers = maxViewers
        call.consentTimeoutSeconds = consentTimeoutSeconds
        call.minimumBitrateKbps = minimumBitrateKbps
        call.droppablePeriod = droppablePeriod
        call.secondEncoding = secondEncoding
        call.sfu = sfu
        call.streaming = streaming
        call.audio = sound.audio
        call.opus = sound.opus
        if let e2ee, let passphrase {
            call.e2ee = E2EESettings(passphrase: passphrase, keyFile: e2ee.keyFile, salt: e2ee.salt, keyIndex: e2ee.keyIndex)
        }
        return call
    }

    /// Why a UDP socket cannot bind to `address` port 0 (nil when it can): an address no interface has
    /// gives `bind(2)`'s EADDRNOTAVAIL, which libnice would only report by gathering no candidate.
    static func bindProblem(_ address: String) -> String? {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let isV4 = inet_pton(AF_INET, address, &v4.sin_addr) == 1
        guard isV4 || inet_pton(AF_INET6, address, &v6.sin6_addr) == 1 else { return "not an IP address" }
        let fd = socket(isV4 ? AF_INET : AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return SystemErrorText.of() }
        defer { close(fd) }
        let result: Int32
        if isV4 {
            v4.sin_family = sa_family_t(AF_INET)
            result = withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        } else {
            v6.sin6_family = sa_family_t(AF_INET6)
            result = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        return result == 0 ? nil : SystemErrorText.of()
    }

    /// Dotted IPv4 or an IPv6 literal.
    static func isIPLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// `turn:[USER:PASS@]HOST[:PORT][?transport=…]`: the credentials, when present, come out of the URL.
    static func turnServer(_ text: String) throws(UsageError) -> TURNServer {
        var url = text
        var username = ""
        var credential = ""
        if let at = text.lastIndex(of: "@"), let colon = text.firstIndex(of: ":") {
            let userinfo = text[text.index(after: colon)..<at]
            guard let separator = userinfo.firstIndex(of: ":") else {
                throw UsageError("--turn: credentials must be USER:PASS@ in '\(text)'")
            }
            username = String(userinfo[..<separator])
            credential = String(userinfo[userinfo.index(after: separator)...])
            url = String(text[...colon]) + String(text[text.index(after: at)...])
        }
        do {
            return try TURNServer(url: url, username: username, credential: credential)
        } catch {
            throw UsageError("--turn: \(error)")
        }
    }
}

/// `--e2ee-key-file FILE [--e2ee-salt S] [--e2ee-key-index N]`. The passphrase itself is read later
/// (``E2EEKeyFile``), never taken from the command line.
struct E2EEOptions {
    var keyFile: String
    var salt: String
    var keyIndex: Int

    /// nil when `--e2ee-key-file` is absent (then the other two are refused).
    init?(_ arguments: CommandLineArguments) throws(UsageError) {
        guard let file = arguments.string("e2ee-key-file") else {
            for name in ["e2ee-salt", "e2ee-key-index"] where arguments.string(name) != nil {
                throw UsageError("--\(name) needs --e2ee-key-file")
            }
            return nil
        }
        guard !file.isEmpty else { throw UsageError("--e2ee-key-file needs a file name") }
        keyFile = file
        salt = arguments.string("e2ee-salt") ?? FrameKey.defaultSalt
        guard !salt.isEmpty, !salt.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { throw UsageError("--e2ee-salt must be non-empty, on one line") }
        keyIndex = try arguments.int("e2ee-key-index", in: 0...15) ?? 0
    }
}
