extension Call {
    /// Whether the call still works, for a service manager's watchdog (``ScreencastSupport/ServiceNotifier``):
    /// it runs, no stop was asked for, and the source's counters can be read (their lock is free, so the
    /// encoder and the capturers are not stuck holding it). Takes the source's lock once.
    public var isResponsive: Bool {
        guard runningPhase == .running, stopRequest.current == nil else { return false }
        return video.source.stats.encoded >= 0
    }
}

extension Call {
    /// Pauses the share (`screencast-call pause`): the source takes no new picture, viewers keep the last one and
    /// their pages say "sharing paused" (``sharerState``). Returns false when it was paused already.
    @discardableResult
    public func pause() -> Bool {
        let changed = video.source.pause()
        if changed { logger.info("share paused by the sharer") }
        return changed
    }

    /// Resumes after ``pause()``; returns false when it was not paused.
    @discardableResult
    public func resume() -> Bool {
        let changed = video.source.resume()
        if changed { logger.info("share resumed by the sharer") }
        return changed
    }
}
