import Publishing
import ScreencastSupport

/// `--whip URL [--whip-token T]` or `--janus URL --janus-room N [--janus-create-room] [--janus-display NAME]
/// [--janus-pin P] [--janus-secret S]`: where the SFU leg publishes (nil: no SFU leg).
enum SFUOptions {
    static let valueOptions: Set<String> = ["whip", "whip-token", "janus", "janus-room", "janus-display", "janus-pin", "janus-secret"]
    static let flagOptions: Set<String> = ["janus-create-room"]

    static let usage = """

        Publishing to an SFU (one more consumer of the one encoder; local viewers are unaffected by it):
          --whip URL               publish to a WHIP endpoint (RFC 9725: MediaMTX, LiveKit, Cloudflare,
                                   Janus behind simple-whip-server); the offer carries every candidate (no
                                   trickle)
          --whip-token T           send 'Authorization: Bearer T' to the WHIP endpoint
          --janus URL              publish into a Janus VideoRoom through the Janus HTTP API
                                   (URL like http://HOST:8088/janus); needs --janus-room
          --janus-room N           the room number
          --janus-create-room      create the room (VP8, capped at --bitrate or 2500 kbps) when it is
                                   missing, also after Janus restarts
          --janus-display NAME     our publisher's display name (default screencast)
          --janus-pin P            the room's PIN
          --janus-secret S         the room's secret (to create it with one)
          The leg reconnects at once, then after 2 s, 5 s, 10 s and every 10 s; /stats shows it under "sfu".
        """

    /// The transport the options ask for.
    /// - Throws: ``UsageError`` (exit 64) for a bad URL, a room without --janus, both --whip and --janus, …
    static func transport(_ arguments: CommandLineArguments, bitrateKbps: Int?) throws(UsageError) -> (any SFUTransport)? {
        let whip = arguments.string("whip")
        let janus = arguments.string("janus")
        if whip != nil, janus != nil { throw UsageError("--whip and --janus cannot go together: one SFU leg per call") }
        if whip == nil, arguments.string("whip-token") != nil { throw UsageError("--whip-token needs --whip") }
        let janusOnly = ["janus-room", "janus-display", "janus-pin", "janus-secret"].filter { arguments.string($0) != nil }
            + (arguments.has("janus-create-room") ? ["janus-create-room"] : [])
        if janus == nil, let first = janusOnly.first { throw UsageError("--\(first) needs --janus") }
        do {
            if let whip { return WHIPTransport(client: try WHIPClient(endpoint: whip, token: arguments.string("whip-token"))) }
            guard let janus else { return nil }
            guard let roomText = arguments.string("janus-room") else { throw UsageError("--janus needs --janus-room N") }
            guard let room = UInt64(roomText), room > 0 else { throw UsageError("--janus-room must be a positive number, not '\(roomText)'") }
            var options = JanusVideoRoom.Options(url: janus, room: room)
            options.createRoom = arguments.has("janus-create-room")
            if let display = arguments.string("janus-display") { options.display = display }
            options.pin = arguments.string("janus-pin")
            options.secret = arguments.string("janus-secret")
            options.bitrate = UInt64(bitrateKbps ?? 2_500) * 1000
            return try JanusVideoRoom(options: options)
        } catch let error as PublishingError {
            throw UsageError(error.description)
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("\(error)")
        }
    }
}
