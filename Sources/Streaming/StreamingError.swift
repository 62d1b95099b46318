/// Why a stream (an RTMP destination, an MP4 recording) could not be set up or went wrong (the Streaming
/// module's one error type).
public enum StreamingError: Error, Equatable, CustomStringConvertible {
    /// A destination URL that is not `rtmp://HOST[:PORT]/APP/KEY` or `rtmps://…` (said why).
    case badURL(String)
    /// A stream key file that cannot be read or is empty.
    case keyFile(path: String, reason: String)
    /// libavformat failed: `what` it was doing, its error text, and the last line it logged (the RTMP
    /// server's own words, when it sent some).
    case library(what: String, code: Int32, message: String)
    /// A frame came before any keyframe with SPS and PPS: no sequence header can be written yet.
    case noParameterSets
    /// A write took longer than allowed (a server that stopped reading), or the connection took too long.
    case timedOut(what: String, seconds: Double)

    /// libavformat's "Input/output error" (`AVERROR(EIO)`): for an RTMP open, the server closed the
    /// connection after the handshake without a status message of its own.
    static let inputOutputCode: Int32 = -5

    /// This error, explained for an RTMP destination: a server that closed the connection without a word while
    /// the stream was being set up (nginx-rtmp does so for an unknown application or an `on_publish` refusal)
    /// gets a sentence naming what it most likely refused.
    func explained(for url: RTMPURL) -> StreamingError {
        guard case .library(let what, let code, let message) = self, code == Self.inputOutputCode, what.hasPrefix("cannot open"),
              !message.contains("Server error") else { return self }
        return .library(
            what: what, code: code,
            message: "\(message); the server closed the connection without a status message while the stream was being set up: "
                + "it does not know the application '\(url.application)', or it refused the stream key")
    }

    public var description: String {
        switch self {
        case .badURL(let why): why
        case .keyFile(let path, let reason): "stream key file \(path): \(reason)"
        case .library(let what, let code, let message): "\(what): \(message) (\(code))"
        case .noParameterSets: "no keyframe with SPS and PPS yet"
        case .timedOut(let what, let seconds): "\(what) took more than \(Int(seconds)) s"
        }
    }
}
