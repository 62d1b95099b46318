/// Whether the peer still wants our media (RFC 7675 consent freshness), kept by us rather than by libnice.
/// Sans-I/O; one per connected peer, driven by ``PeerConnectionStateMachine``.
///
/// The peer's consent is renewed by anything only the peer can send: an SRTCP packet that authenticates
/// (a receiver sends reports and feedback every second or so, RFC 3550 §6.2), a DTLS record that passes
/// OpenSSL's checks, or an ICE check that succeeds (libnice's READY, a newly selected pair). A spoofed
/// datagram renews nothing, which is what RFC 7675 §5.1 asks of the STUN transactions it uses.
///
/// ```
///   fresh ── no renewal for limitMicros ──▶ lapsed ── graceMicros more ──▶ expired (the peer ends)
///     ▲        (RFC 7675 §5.1: 30 s)         │  media and RTCP cease (§5.1: MUST stop sending);
///     └──── renewed() ───────────────────────┘  the owner may restart ICE meanwhile (restarted())
/// ```
///
/// Why not libnice's own (`consent-freshness`): Debian 12's libnice 0.1.21 revokes consent 10 s after its
/// last answered check (RFC 7675 says 30 s; libnice 0.1.22 changed it) and never sends on the pair again, and
/// on a congested link two of its checks a few seconds apart are easily tail-dropped behind our own media
/// (a viewer behind a 300 kbit/s bottleneck froze for good, 2 runs in 17). The peer's SRTCP comes the other
/// way, where our media is not queued.
///
/// Silence is counted in the steps between two looks at the clock (``advance(nowMicros:)``), each counted as
/// at most ``maximumStepMicros``: time in which this process did not run (SIGSTOP, a starved host) is not
/// the peer's silence, so a stopped call does not drop its viewers on SIGCONT. The owner must look at least
/// every ``maximumStepMicros`` (``deadlineMicros``).
public struct ConsentFreshness: Sendable, Equatable {
    /// RFC 7675 §5.1: consent expires 30 s after it was last renewed.
    public static let rfc7675LimitMicros: UInt64 = 30_000_000
    /// The most one step between two looks counts as silence, µs (longer gaps are a process that did not run).
    public static let maximumStepMicros: UInt64 = 1_000_000

    public enum Phase: String, Sendable, Equatable {
        /// Renewed within the limit: media flows.
        case fresh
        /// Not renewed for ``limitMicros``: nothing is sent; renewal or a restart brings it back.
        case lapsed
        /// Lapsed for ``graceMicros`` more: the peer is given up.
        case expired
    }

    /// What a call changed.
    public enum Change: Sendable, Equatable {
        case none
        /// fresh → lapsed: stop sending, tell the owner (who may restart ICE).
        case lapsed
        /// lapsed → fresh: the peer was heard again; send again, starting with a keyframe.
        case renewed
        /// lapsed → expired: end the peer.
        case expired
    }

    /// Silence after which consent lapses, µs (``rfc7675LimitMicros`` unless a test shortens it).
    public let limitMicros: UInt64
    /// How long a lapsed consent waits for renewal or a restart before the peer is given up, µs.
    public let graceMicros: UInt64
    public private(set) var phase = Phase.fresh
    /// Silence counted since the last renewal, µs (stalls of our own process count ``maximumStepMicros`` each).
    public private(set) var silentMicros: UInt64 = 0
    /// Times consent lapsed.
    public private(set) var lapses = 0
    private var lastLookMicros: UInt64

    /// Consent as given at `nowMicros` (the connection just came up: DTLS finished over a checked pair).
    /// - Parameters:
    ///   - limitMicros: silence after which consent lapses, µs (at least 1).
    ///   - graceMicros: a lapse this long ends the peer, µs.
    public init(limitMicros: UInt64 = ConsentFreshness.rfc7675LimitMicros, graceMicros: UInt64, nowMicros: UInt64) {
        self.limitMicros = max(limitMicros, 1)
        self.graceMicros = graceMicros
        lastLookMicros = nowMicros
    }

    /// The peer proved it is there (authenticated SRTCP or DTLS, a successful ICE check).
    public mutating func renewed(nowMicros now: UInt64) -> Change {
        lastLookMicros = max(lastLookMicros, now)
        silentMicros = 0
        switch phase {
        case .fresh: return .none
        case .lapsed:
            phase = .fresh
            return .renewed
        case .expired: return .none
        }
    }

    /// An ICE restart began: the new path is checked afresh, and its checks have the full limit to succeed.
    public mutating func restarted(nowMicros now: UInt64) {
        guard phase != .expired else { return }
        lastLookMicros = max(lastLookMicros, now)
        silentMicros = 0
        phase = .fresh
    }

    /// Counts the silence since the last look (at most ``maximumStepMicros`` of it) and moves on when a limit
    /// is reached.
    public mutating func advance(nowMicros now: UInt64) -> Change {
        guard now > lastLookMicros else { return .none }
        silentMicros += min(now - lastLookMicros, Self.maximumStepMicros)
        lastLookMicros = now
        switch phase {
        case .fresh where silentMicros >= limitMicros:
            phase = .lapsed
            lapses += 1
            return .lapsed
        case .lapsed where silentMicros >= limitMicros + graceMicros:
            phase = .expired
            return .expired
        case .fresh, .lapsed, .expired:
            return .none
        }
    }

    /// When to look next (monotonic µs): within ``maximumStepMicros``, or sooner when a limit falls earlier;
    /// nil once expired.
    public var deadlineMicros: UInt64? {
        let left: UInt64
        switch phase {
        case .fresh: left = limitMicros - min(silentMicros, limitMicros)
        case .lapsed: left = limitMicros + graceMicros - min(silentMicros, limitMicros + graceMicros)
        case .expired: return nil
        }
        return lastLookMicros + max(1, min(left, Self.maximumStepMicros))
    }
}
