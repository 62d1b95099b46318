/// Whether a capture loop's turn makes frames, from whether anybody reads them (sans-I/O). An agent whose
/// socket has no call kept grabbing and encoding JPEG for nobody (issue 34): while no reader is there the loop
/// only drains its events and waits ``pollMicros``; when one comes back the next frame is the whole picture at
/// once (the damage since the last frame sent would describe a picture the new reader never had).
struct ReaderHold {
    enum Turn: Equatable {
        /// Capture as usual.
        case run
        /// No reader: make nothing, wait a little.
        case hold
        /// A reader is back after a hold: the next frame is whole and due now, then capture as usual.
        case resume
    }

    /// How often a holding loop looks again, µs (100 ms: a call that appears gets its first picture that soon).
    static let pollMicros: UInt64 = 100_000

    private var holding = false

    mutating func turn(readerPresent: Bool) -> Turn {
        if !readerPresent {
            holding = true
            return .hold
        }
        defer { holding = false }
        return holding ? .resume : .run
    }
}

extension ReaderHold {
    /// A capture loop's turn with nobody reading, done the same way by every loop: counted in `stats`, a wait of
    /// ``pollMicros`` (`sleep`, which a stop ends early); when a reader is back, `resume` (forget the damage
    /// since the last frame sent) and the scheduler marked dirty, so the next frame is whole and due now.
    /// - Returns: true when the loop makes nothing this turn (`continue`).
    mutating func skipsTurn(
        readerPresent: Bool, stats: inout CaptureStats, scheduler: inout CaptureScheduler, sleep: (UInt64) -> Void,
        resume: () -> Void = {}
    ) -> Bool {
        switch turn(readerPresent: readerPresent) {
        case .hold:
            stats.turnsWithoutReader += 1
            sleep(Self.pollMicros)
            return true
        case .resume:
            resume()
            scheduler.markDirty()
            return false
        case .run:
            return false
        }
    }
}
