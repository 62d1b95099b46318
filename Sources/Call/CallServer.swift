import DTLS
import ScreencastSupport
import Sharing
import Signaling

/// The call's HTTP server: the viewer page, WHEP (sessions go to the viewers), `/stats` and `/metrics`; in share mode also
/// the links printed for the sharer.
enum CallServer {
    /// Starts serving on the configuration's `http` (nil with none). A bind failure is fatal, on the default
    /// address as on a chosen one: a user who starts a call expects its page.
    /// - Parameters:
    ///   - encrypted: frames are end-to-end encrypted (the page then asks for the passphrase, with this salt).
    ///   - announce: writes the share banner (standard output in `screencast-call`).
    /// - Throws: ``CallError/httpUnavailable(endpoint:explicit:https:share:cause:)``, ``CallError/certificate(_:)``
    ///   (the HTTPS identity).
    static func start(
        _ call: CallConfiguration, viewers: ViewerHub, encrypted: Bool, about: CallStats.About,
        stats: @escaping @Sendable () -> JSONValue, metrics: @escaping @Sendable () -> String,
        pause: @escaping @Sendable (Bool) -> Bool, sharerState: @escaping @Sendable () -> SharerState, logger: Logger,
        announce: @Sendable (String) -> Void
    ) throws(CallError) -> SignalingServer? {
        guard let endpoint = call.http else { return nil }
        var configuration = SignalingConfiguration(
            endpoint: endpoint, token: call.token.flatMap(BearerToken.init), sourceFramesPerSecond: call.source.maxFramesPerSecond)
        configuration.e2eeSalt = encrypted ? call.e2ee?.salt : nil
        // The test pattern changes every frame: a low rate there is load, not a still screen.
        if case .testPattern = call.source.fallback { configuration.sourceSendsOnlyChanges = false }
        let identity: TLSIdentity?
        var certificateKept = false
        do {
            if call.share, let state = call.shareState {
                let (kept, wasKept) = try state.identity(logger: logger)
                identity = kept
                certificateKept = wasKept
                if wasKept { logger.info("https certificate kept from the last run", ["folder": state.folder]) }
            } else {
                identity = call.https ? try ShareLinks.makeIdentity() : nil
            }
        } catch { throw .certificate(error) }
        configuration.serverOptions.tls = identity
        let text: @Sendable () -> String = { CallStats.text(stats()) }
        do {
            let server = try SignalingServer(
                configuration: configuration, sessions: viewers, stats: stats, statsText: text, metrics: metrics, sharerState: sharerState,
                kick: { [weak viewers] id in viewers?.kick(id: id) ?? false }, pause: pause,
                logger: logger.named("http"))
            // In share mode the page's address is the one viewers use (the first printed link), not loopback.
            let hosts = call.share ? ShareLinks.reachableHosts(boundTo: server.configuration.endpoint.host) : []
            let base = hosts.first.map { "\(server.scheme)://\($0):\(server.port)" } ?? server.baseURL
            about.viewerURL.withLock { $0 = base + "/" }
            // Never the token: logs go to journals and files others read. The user gave it (--token), or share mode
            // printed the links on standard output.
            logger.info("viewer page", [
                "url": server.viewerURL(), "whep": server.baseURL + "/whep", "token": call.token == nil ? "none" : "required (not logged)",
            ])
            if let identity { logger.info("https certificate", ["sha256": identity.fingerprint]) }
            if call.share { announce(banner(call, server: server, hosts: hosts, identity: identity, certificateKept: certificateKept)) }
            return server
        } catch {
            throw .httpUnavailable(
                endpoint: endpoint.description, explicit: call.httpExplicit, https: call.https, share: call.share, cause: "\(error)")
        }
    }

    /// Share mode: the links for other machines (token included), a QR code of the first, the fingerprint.
    private static func banner(
        _ call: CallConfiguration, server: SignalingServer, hosts: [String], identity: TLSIdentity?, certificateKept: Bool
    ) -> String {
        var text = ShareLinks.banner(
            scheme: server.scheme, hosts: hosts, port: server.port, token: call.token, fingerprint: identity?.fingerprint,
            certificateKept: certificateKept)
        if call.e2ee != nil {
            text += "  End-to-end encrypted: a link alone shows nothing. Send the passphrase apart from it; viewers type it\n"
                + "  in the page, or add #key=PASSPHRASE to the link.\n"
        }
        if let first = hosts.first, let code = ShareLinks.qrCode(
            "\(server.scheme)://\(first):\(server.port)/" + (call.token.map { "?token=" + SignalingServer.percentEncoded($0) } ?? "")) {
            text += code
        }
        return text + "\n"
    }
}
