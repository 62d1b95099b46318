/// What the viewer page shows of the sharer (`GET /source`), so that it never says "live" when nothing is
/// (issue 34: a black picture "live | 0 fps" before any agent, the frozen last frame "live" after it stopped).
public enum SharerState: String, Sendable, Equatable, CaseIterable {
    /// Nothing has been shared yet: no agent has sent a picture and no other source runs ("waiting for the sharer").
    case waiting
    /// Pictures are coming: an agent is connected, or the test pattern or a dump file plays.
    case live
    /// An agent shared and has gone; the picture shown is its last one ("sharing paused").
    case paused
    /// The call is stopping ("sharing ended"). Once it has stopped the page cannot ask: it says the same when
    /// `/source` stops answering.
    case ended
}
