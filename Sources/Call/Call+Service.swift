extension Call {
    /// Whether the call still works, for a service manager's watchdog (``ScreencastSupport/ServiceNotifier``):
    /// it runs, no stop was asked for, and the source's counters can be read (their lock is free, so the
    /// encoder and the capturers are not stuck holding it). Takes the source's lock once.
    public var isResponsive: Bool {
        guard runningPhase == .running, stopRequest.current == nil else { return false }
        return video.source.stats.encoded >= 0
    }
}
