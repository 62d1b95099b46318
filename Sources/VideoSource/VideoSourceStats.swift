public import FrameWire
public import ScreencastSupport
import Synchronization

/// Why a frame did not become an encoded frame of its own.
public enum DropReason: String, Sendable, CaseIterable {
    /// The JPEG body did not decode (or only with a warning).
    case decodeError
    /// A newer frame replaced it while it waited for the encoder (latest frame wins; `--max-fps`).
    case stale
    /// Byte-identical to the picture just encoded (a keepalive of a static screen); refinement goes on.
    case unchanged
    /// It came from a capturer that is not the active source (a race at a switch).
    case inactive
    /// libvpx's rate control dropped it (no packet).
    case encoder
    /// libvpx failed on it.
    case encodeError
    /// Its JPEG claims more pixels than the decode budget (`maximumDecodePixels`): refused before decoding.
    case tooLarge
}

/// A snapshot of a video source's counters and rates: what the stats line prints every `--stats-interval`
/// and what `json` gives the HTTP `/stats` of a later issue. Counters run from `start()`.
public struct VideoSourceStats: Sendable, Equatable {
    /// The source feeding the encoder now (nil: none, e.g. `--source screen` before an agent connects).
    public var source: SourceKind?
    /// The fallback chosen with `--source` (nil for `screen`).
    public var fallback: SourceKind?
    /// Whether a connection to the screen socket is open now (a sender, or one that has sent nothing yet).
    public var screenConnected = false
    /// Senders connected now that have sent at least one complete frame (0 or 1: one sender at a time).
    /// A connection that sends no frame (a liveness probe that connects and closes, a silent client
    /// dropped by the watchdog) never counts; a refused one (a second sender) is not accepted at all.
    public var senders = 0
    /// Senders so far that sent at least one complete frame (the running total of `senders`).
    public var sendersTotal = 0
    /// Connections accepted so far, whether or not they sent a frame (refused ones are not accepted).
    public var connections = 0
    /// What the connected agent says it captures (its last frame's `Capture-*` fields; nil without an agent
    /// or from a sender that does not write them, such as iOS).
    public var agentCapture: CaptureDescription?
    /// Agents dropped by the watchdog.
    public var watchdogDrops = 0
    /// Frames whose JPEG size differed from `Buffer-Width`/`Height`.
    public var sizeMismatches = 0
    /// Screen frames whose `Buffer-Damage` was known (Protocol/frame-wire.md §2.9), and the sum of the share
    /// of the picture each said changed (0…1; ``meanDamagedFraction`` is the average).
    public var damageFrames = 0
    public var damagedFractionSum = 0.0
    /// Screen frames whose `Buffer-Damage` was malformed (taken whole).
    public var damageFaults = 0
    /// `BGRX-SHM` frames converted only where their damage said.
    public var partialConversions = 0
    /// Frames read from the socket or the dump file (JPEG bodies).
    public var received = 0
    /// Of those, JPEGs decoded.
    public var decoded = 0
    /// Pictures handed to the source by any capturer (decoded JPEGs and test-pattern frames).
    public var submitted = 0
    /// Encoded frames delivered to the sinks (new frames, refinements, repeats).
    public var encoded = 0
    /// Of those, keyframes.
    public var keyframes = 0
    /// Of those, refinement re-encodes of a static picture.
    public var refinements = 0
    /// Of those, repeats of a refined static picture.
    public var repeats = 0
    /// Of those, non-reference frames (the droppable cadence; ``VideoSource/setDroppableCadence(period:)``).
    public var droppable = 0
    /// The droppable cadence in force: one reference frame in this many new frames (0: off).
    public var droppablePeriod = 0
    /// Bytes of all encoded frames.
    public var encodedBytes = 0
    /// New pictures downscaled to fit `maximumEncodeSize` before they were encoded.
    public var downscaled = 0
    /// Bytes allocated by the frame pool's idle buffers (it frees buffers far larger than the pictures).
    public var poolBytes = 0
    /// The frame pool's idle buffers.
    public var poolBuffers = 0
    /// Frames dropped, by reason.
    public var dropped: [DropReason: Int] = [:]
    /// Encoded frames per second over the last `rateWindowSeconds`.
    public var fps = 0.0
    /// Encoded kilobits per second over the same window.
    public var kbps = 0.0
    /// Encode time per frame, milliseconds: median of the last 128 encodes.
    public var encodeMillisP50 = 0.0
    /// Encode time per frame, milliseconds: 95th percentile of the last 128 encodes.
    public var encodeMillisP95 = 0.0
    /// Encode time per frame, milliseconds: 99th percentile of the last 128 encodes.
    public var encodeMillisP99 = 0.0
    /// Encode time of every frame encoded so far, summed, milliseconds (`/metrics`' summary `_sum`).
    public var encodeMillisTotal = 0.0
    /// Frames waiting for the encoder (0 or 1: latest frame wins).
    public var queueDepth = 0
    /// Width of the last encoded picture, pixels (0 before the first).
    public var width = 0
    /// Height of the last encoded picture, pixels (0 before the first).
    public var height = 0
    /// The encoder's current CBR target, kbps (0 before the encoder exists).
    public var bitrateKbps = 0
    /// Keyframe requests received (new viewers, PLI, FIR), and of those, the ones that added nothing
    /// because one was already pending (coalesced into it).
    public var keyframeRequests = 0
    public var keyframeRequestsCoalesced = 0
    /// The rate policy's frame-rate cap, new frames per second (0 before the encoder exists).
    public var fpsCap = 0.0
    /// The quantizer range the rate policy gives libvpx, 0…63.
    public var minQuantizer = 0
    public var maxQuantizer = 0
    /// The rate policy's encoded size as a share of the source picture's side (1: full size).
    public var scale = 1.0
    /// The byte budget's balance, bytes (negative: in debt; refinements and repeats wait).
    public var budgetBytes = 0
    /// Bits per pixel per new frame the rate policy assumes (its model, or the content's measured cost
    /// when that is more; ``ContentCost``).
    public var bitsPerPixel = 0.0

    /// All zero.
    public init() {}

    /// The average share of the picture a screen frame changed, 0…1 (nil before any frame with damage).
    public var meanDamagedFraction: Double? { damageFrames > 0 ? damagedFractionSum / Double(damageFrames) : nil }

    /// Frames dropped for `reason`.
    public func dropped(_ reason: DropReason) -> Int { dropped[reason] ?? 0 }

    /// The same numbers as ordered JSON:
    /// `{"source","fallback","width","height","bitrateKbps","frames":{received,decoded,submitted,encoded,
    /// keyframes,refinements,repeats,downscaled,droppable},"droppablePeriod" (0: off),"dropped":{decodeError,stale,unchanged,inactive,encoder,
    /// encodeError,tooLarge},"fps","kbps","encodeMs":{"p50","p95"},"queueDepth","bytes","pool":{bytes,
    /// buffers},"screen":{connected,senders,sendersTotal,connections,watchdogDrops,sizeMismatches,"agent":null or
    /// {display,area,rect,fpsAsked},"damage":{frames,meanFraction (null before one),faults,partialConversions}},
    /// "keyframeRequests":{received,coalesced},"rate":{fpsCap,"q":{min,max},budgetBytes,bitsPerPixel,scale}}`.
    public var json: JSONValue {
        .object([
            ("source", source.map { .string($0.rawValue) } ?? .null),
            ("fallback", fallback.map { .string($0.rawValue) } ?? .null),
            ("width", .number(width)),
            ("height", .number(height)),
            ("bitrateKbps", .number(bitrateKbps)),
            ("frames", .object([
                ("received", .number(received)), ("decoded", .number(decoded)), ("submitted", .number(submitted)),
                ("encoded", .number(encoded)), ("keyframes", .number(keyframes)),
                ("refinements", .number(refinements)), ("repeats", .number(repeats)), ("downscaled", .number(downscaled)),
                ("droppable", .number(droppable)),
            ])),
            ("droppablePeriod", .number(droppablePeriod)),
            ("dropped", .object(DropReason.allCases.map { ($0.rawValue, .number(dropped($0))) })),
            ("fps", .double(Self.rounded(fps))),
            ("kbps", .double(Self.rounded(kbps))),
            ("encodeMs", .object([("p50", .double(Self.rounded(encodeMillisP50))), ("p95", .double(Self.rounded(encodeMillisP95)))])),
            ("queueDepth", .number(queueDepth)),
            ("bytes", .number(encodedBytes)),
            ("pool", .object([("bytes", .number(poolBytes)), ("buffers", .number(poolBuffers))])),
            ("screen", .object([
                ("connected", .bool(screenConnected)), ("senders", .number(senders)),
                ("sendersTotal", .number(sendersTotal)), ("connections", .number(connections)),
                ("watchdogDrops", .number(watchdogDrops)), ("sizeMismatches", .number(sizeMismatches)),
                ("agent", agentCapture.map { capture in
                    .object([
                        ("display", capture.display.map { .string($0) } ?? .null),
                        ("area", capture.area.map { .string($0) } ?? .null),
                        ("rect", capture.rect.map { .string($0) } ?? .null),
                        ("fpsAsked", capture.framesPerSecond.map { .string($0) } ?? .null),
                    ])
                } ?? .null),
                ("damage", .object([
                    ("frames", .number(damageFrames)),
                    ("meanFraction", meanDamagedFraction.map { .double((($0 * 10_000).rounded()) / 10_000) } ?? .null),
                    ("faults", .number(damageFaults)), ("partialConversions", .number(partialConversions)),
                ])),
            ])),
            ("keyframeRequests", .object([("received", .number(keyframeRequests)), ("coalesced", .number(keyframeRequestsCoalesced))])),
            ("rate", .object([
                ("fpsCap", .double(Self.rounded(fpsCap))),
                ("q", .object([("min", .number(minQuantizer)), ("max", .number(maxQuantizer))])),
                ("budgetBytes", .number(budgetBytes)),
                ("bitsPerPixel", .double((bitsPerPixel * 1000).rounded() / 1000)),
                ("scale", .double(Self.rounded(scale))),
            ])),
        ])
    }

    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

/// The counters behind `VideoSourceStats`, updated from capturer threads and the encoder thread.
/// Fixed-size rings for rates and encode times, so recording a frame allocates nothing.
final class StatsRecorder: Sendable {
    /// Seconds over which fps and kbps are computed.
    static let rateWindowMicros: UInt64 = 5_000_000

    private struct State {
        var stats = VideoSourceStats()
        /// Encode times (ms) of the last `encodeTimes.count` encodes; `encodeCount` written so far.
        var encodeTimes = [Double](repeating: 0, count: 128)
        var encodeCount = 0
        /// (time µs, bytes) of the last encoded frames, a ring of `rates.count`.
        var rates = [(UInt64, Int)](repeating: (0, 0), count: 512)
        var rateCount = 0
    }

    private let state: Mutex<State>
    /// When counting started (µs); the rate window is shorter before it is full.
    private let startedAt: UInt64

    init(fallback: SourceKind?, startedAt: UInt64) {
        self.startedAt = startedAt
        var initial = State()
        initial.stats.fallback = fallback
        state = Mutex(initial)
    }

    func received() { state.withLock { $0.stats.received += 1 } }
    /// A frame from the agent's socket, with what its header says is captured.
    func received(capture: CaptureDescription?, damagedFraction: Double? = nil) {
        state.withLock { s in
            s.stats.received += 1
            if let damagedFraction {
                s.stats.damageFrames += 1
                s.stats.damagedFractionSum += damagedFraction
            }
            if s.stats.agentCapture != capture { s.stats.agentCapture = capture }
        }
    }
    func decoded() { state.withLock { $0.stats.decoded += 1 } }
    func submitted() { state.withLock { $0.stats.submitted += 1 } }
    func dropped(_ reason: DropReason) { state.withLock { $0.stats.dropped[reason, default: 0] += 1 } }
    /// A connection was accepted (it becomes a sender with its first frame: `senderSentFirstFrame`).
    func connectionAccepted() { state.withLock { $0.stats.connections += 1; $0.stats.screenConnected = true } }
    /// The connection brought its first complete frame: it is a sender now.
    func senderSentFirstFrame() { state.withLock { $0.stats.senders += 1; $0.stats.sendersTotal += 1 } }
    /// The connection ended; `wasSender` when it had sent a frame.
    func connectionEnded(wasSender: Bool) {
        state.withLock { s in
            s.stats.screenConnected = false
            s.stats.agentCapture = nil
            if wasSender { s.stats.senders = max(0, s.stats.senders - 1) }
        }
    }
    func watchdogDrop() { state.withLock { $0.stats.watchdogDrops += 1 } }
    func sizeMismatch() { state.withLock { $0.stats.sizeMismatches += 1 } }
    /// Damage faults and partial conversions of one screen frame.
    func damage(faults: Int, partialConversions: Int) {
        state.withLock { s in
            s.stats.damageFaults += faults
            s.stats.partialConversions += partialConversions
        }
    }
    func activeSource(_ kind: SourceKind?) { state.withLock { $0.stats.source = kind } }
    func bitrate(_ kbps: Int) { state.withLock { $0.stats.bitrateKbps = kbps } }
    /// The droppable cadence in force (0: off).
    func droppablePeriod(_ period: Int) { state.withLock { $0.stats.droppablePeriod = period } }
    func downscaled() { state.withLock { $0.stats.downscaled += 1 } }
    func keyframeRequested() { state.withLock { $0.stats.keyframeRequests += 1 } }
    func keyframeCoalesced() { state.withLock { $0.stats.keyframeRequestsCoalesced += 1 } }
    func rate(_ decision: ScreenRatePolicy.Decision, budgetBits: Double, bitsPerPixel: Double) {
        state.withLock { s in
            s.stats.bitsPerPixel = bitsPerPixel
            s.stats.fpsCap = decision.framesPerSecond
            s.stats.scale = decision.scale
            s.stats.minQuantizer = decision.minQuantizer
            s.stats.maxQuantizer = decision.maxQuantizer
            s.stats.budgetBytes = Int((budgetBits / 8).rounded())
        }
    }

    /// One encoded frame at `now` (µs), `millis` of encode time.
    func encoded(
        bytes: Int, keyframe: Bool, droppable: Bool = false, reason: EncodeScheduler.Reason, width: Int, height: Int,
        millis: Double, now: UInt64
    ) {
        state.withLock { s in
            s.stats.encoded += 1
            if droppable { s.stats.droppable += 1 }
            s.stats.encodedBytes += bytes
            if keyframe { s.stats.keyframes += 1 }
            switch reason {
            case .refinement: s.stats.refinements += 1
            case .repeatFrame: s.stats.repeats += 1
            case .newFrame, .keyframeRequest: break
            }
            s.stats.width = width
            s.stats.height = height
            s.rates[s.rateCount % s.rates.count] = (now, bytes)
            s.rateCount += 1
            s.encodeTimes[s.encodeCount % s.encodeTimes.count] = millis
            s.encodeCount += 1
            s.stats.encodeMillisTotal += millis
        }
    }

    /// The counters plus rates and percentiles as of `now` (µs).
    func snapshot(now: UInt64, queueDepth: Int) -> VideoSourceStats {
        state.withLock { s in
            var stats = s.stats
            stats.queueDepth = queueDepth
            let samples = min(s.encodeCount, s.encodeTimes.count)
            if samples > 0 {
                let sorted = s.encodeTimes[0..<samples].sorted()
                stats.encodeMillisP50 = sorted[(samples - 1) / 2]
                stats.encodeMillisP95 = sorted[min(samples - 1, Int((Double(samples) * 0.95).rounded(.up)) - 1)]
                stats.encodeMillisP99 = sorted[min(samples - 1, Int((Double(samples) * 0.99).rounded(.up)) - 1)]
            }
            let start = now > Self.rateWindowMicros ? now - Self.rateWindowMicros : 0
            var frames = 0
            var bytes = 0
            var oldest = now
            for index in 0..<min(s.rateCount, s.rates.count) {
                let (time, size) = s.rates[index]
                if time > start, time <= now {
                    frames += 1
                    bytes += size
                    oldest = min(oldest, time)
                }
            }
            // A full ring may not reach back the whole window: rate over the span it covers; early on,
            // the window is the time since counting started.
            var spanMicros = min(Self.rateWindowMicros, now > startedAt ? now - startedAt : 0)
            if s.rateCount > s.rates.count, frames == s.rates.count { spanMicros = now - oldest }
            let span = Double(spanMicros) / 1e6
            if span > 0 {
                stats.fps = Double(frames) / span
                stats.kbps = Double(bytes) * 8 / 1000 / span
            }
            return stats
        }
    }
}
