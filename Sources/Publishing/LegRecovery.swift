/// What the SFU leg does when its ICE fails (RFC 9725 §4.3.3): restart ICE on the same session first
/// (PATCH; DTLS and SRTP survive, RFC 8842 §4), and publish anew (a new POST on the ``ReconnectSchedule``)
/// when the transport cannot restart, the PATCH fails (404 gone, 405, 412, any error), the restarted ICE
/// does not connect within ``restartTimeLimitMicros`` of the first restart, or ICE fails again on the last of
/// ``restartsPerFailure`` restarts in a row (a restart's first checks can be lost as well: the path may still
/// be flapping, or the server's agent may not have its new credentials yet, so one FAILED during a restart
/// restarts again rather than tearing the session down). Sans-I/O: times are arguments (monotonic µs), the
/// owner carries out the ``Action``s.
///
/// ```
///   up ── iceFailed ──▶ restarting ── restartAnswered ──▶ (waiting for ICE) ── iceConnected ──▶ up
///    │    → .restartICE   │  ├ iceFailed, fewer than restartsPerFailure restarts ──▶ .restartICE (again)
///    │                    │  └ restartFailed(why) / tick past the limit / iceFailed ──▶ .republish(why)
///    └ iceFailed without restart support ──▶ .republish("ICE failed")                        (down)
/// ```
public struct LegRecovery: Sendable, Equatable {
    /// What the owner does next.
    public enum Action: Sendable, Equatable {
        /// Nothing: keep waiting.
        case none
        /// Make new ICE credentials and PATCH them (the restart numbered `number`, from 1).
        case restartICE(number: Int)
        /// Give up on the session: close it and publish anew, logging `reason`.
        case republish(reason: String)
    }

    /// Where the leg is: published (`up`), restarting ICE on the same session, or given up (`down`: the
    /// owner publishes anew and makes a new ``LegRecovery``).
    public enum Phase: String, Sendable, Equatable { case up, restarting, down }

    /// How long restarting may take from the first restart's PATCH to ICE connected, µs.
    public static let defaultRestartTimeLimitMicros: UInt64 = 10_000_000
    /// Restarts in a row for one failure before the session is given up (each FAILED while restarting, but
    /// the last, restarts again).
    public static let defaultRestartsPerFailure = 3

    public private(set) var phase = Phase.up
    /// Restarts begun and restarts that brought the leg back.
    public private(set) var restarts = 0
    public private(set) var restartsSucceeded = 0
    /// Why the last restart began, or why it failed.
    public private(set) var lastReason: String?
    /// Whether the transport can restart ICE (WHIP's PATCH, RFC 9725 §4.3.3); without it a failure republishes.
    public let supportsRestart: Bool
    /// From the first restart of a failure to ICE connected, µs; past it the session is given up.
    public let restartTimeLimitMicros: UInt64
    /// Restarts in a row for one failure (at least 1): a FAILED on the last of them gives the session up.
    public let restartsPerFailure: Int
    private var restartStartedMicros: UInt64 = 0
    /// Restarts made for the current failure (from 1 while restarting).
    private var restartsInARow = 0

    /// - Parameters:
    ///   - restartTimeLimitMicros: from the first restart of a failure to ICE connected, µs.
    ///   - restartsPerFailure: restarts in a row for one failure (at least 1).
    public init(
        supportsRestart: Bool, restartTimeLimitMicros: UInt64 = Self.defaultRestartTimeLimitMicros,
        restartsPerFailure: Int = Self.defaultRestartsPerFailure
    ) {
        self.supportsRestart = supportsRestart
        self.restartTimeLimitMicros = restartTimeLimitMicros
        self.restartsPerFailure = max(1, restartsPerFailure)
    }

    /// ICE failed (checks or RFC 7675 consent lost).
    public mutating func iceFailed(nowMicros now: UInt64) -> Action {
        switch phase {
        case .up where supportsRestart:
            phase = .restarting
            restarts += 1
            restartsInARow = 1
            restartStartedMicros = now
            lastReason = "ICE failed"
            return .restartICE(number: restarts)
        case .up:
            return down("ICE failed (the transport has no ICE restart)")
        case .restarting where restartsInARow < restartsPerFailure:
            restarts += 1
            restartsInARow += 1
            lastReason = "ICE failed again during ICE restart \(restarts - 1)"
            return .restartICE(number: restarts)
        case .restarting:
            return down("ICE failed again during ICE restart \(restarts)")
        case .down:
            return .none
        }
    }

    /// The server answered the PATCH (200 with its fragment): wait for ICE.
    public mutating func restartAnswered() -> Action { .none }

    /// The restart could not be made or was refused (`reason`: the error).
    public mutating func restartFailed(_ reason: String) -> Action {
        guard phase == .restarting else { return .none }
        return down("ICE restart \(restarts) failed: \(reason)")
    }

    /// ICE is connected again on the restarted session.
    public mutating func iceConnected() -> Action {
        guard phase == .restarting else { return .none }
        phase = .up
        restartsSucceeded += 1
        return .none
    }

    /// Time passes: a restart past its limit gives up.
    public mutating func tick(nowMicros now: UInt64) -> Action {
        guard phase == .restarting, now >= restartStartedMicros + restartTimeLimitMicros else { return .none }
        return down("ICE restart \(restarts) did not connect within \(restartTimeLimitMicros / 1000) ms of the failure")
    }

    private mutating func down(_ reason: String) -> Action {
        phase = .down
        lastReason = reason
        return .republish(reason: reason)
    }
}
