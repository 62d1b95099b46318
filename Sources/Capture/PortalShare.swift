import Foundation
import Glibc
import ScreencastSupport

/// One screen cast from the portal: the session (``PortalSession``) and the consumer of its PipeWire stream
/// (``PipeWireStream``) feeding a ``PortalStaging``. ``PortalCapture`` opens one at start and, when the PipeWire
/// daemon goes away, closes it and opens another (the portal asked again, with the restore token).
///
/// `@unchecked Sendable`: opened on the agent's thread, then handed once to the `portal-capture` thread, which
/// alone closes it; its two parts are `Sendable` owners of their C handles.
final class PortalShare: @unchecked Sendable {
    private let session: PortalSession
    private let stream: PipeWireStream

    /// Asks the portal (CreateSession → SelectSources → Start → OpenPipeWireRemote), keeps the new restore token
    /// in `settings.restoreToken`, and connects the stream.
    /// - Parameters:
    ///   - request: the session's request; its `restoreToken` is what the store holds when nil is given.
    ///   - staging: receives the pictures; `end` when the session closes or the stream ends, `lose` when the
    ///     PipeWire daemon goes away.
    /// - Throws: the portal's setup errors (``CaptureError/portalMissing(_:)``, ``CaptureError/portalDenied(_:)``,
    ///   ``CaptureError/portalFailed(_:)``) and ``CaptureError/pipeWire(_:)``.
    init(
        _ request: PortalSession.Request, configuration: CaptureConfiguration, settings: PortalSettings, staging: PortalStaging,
        logger: Logger
    ) throws(CaptureError) {
        let session = try PortalSession(request, logger: logger.named("portal")) {
            staging.end(.ended("the portal closed the screen-cast session (stopped from the desktop)"))
        }
        let started = session.started
        if let store = settings.restoreToken {
            do throws(CaptureError) {
                if let token = started.restoreToken { try store.save(token) } else { store.forget() }
            } catch {
                logger.warning("cannot keep the portal's restore token; the chooser will show next time", ["path": store.path, "error": error])
            }
        }
        do throws(CaptureError) {
            stream = try PipeWireStream(
                fileDescriptor: started.fileDescriptor, node: started.node, maxFramesPerSecond: configuration.maxFramesPerSecond,
                cursorMetadata: started.cursorMetadata, logger: logger.named("pipewire"), onPicture: { staging.put($0) },
                onCursor: { staging.putPointer($0) },
                onEnd: { end in
                    switch end {
                    case .unlinked(let why): staging.end(.ended("the screen-cast stream ended: \(why)"))
                    case .failed(let why): staging.end(.failed(.pipeWire(why)))
                    case .daemonLost(let why): staging.lose(why)
                    }
                })
        } catch {
            session.close()
            throw error
        }
        self.session = session
    }

    /// The consumer first, then the session: after a stream that was delivering pictures, 0.5 s between them
    /// (`pause`: xdpw 0.7.0 can crash when its session is closed under a consumer). Idempotent.
    func close(pauseBeforeSession pause: Bool) {
        stream.stop()
        if pause { usleep(500_000) }
        session.close()
    }
}
