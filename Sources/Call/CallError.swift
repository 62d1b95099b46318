public import DTLS
public import FrameCrypto
public import Streaming
public import VideoSource

/// Why a call could not be built, started, or asked to do something. Each case that wraps another module's
/// error describes itself exactly as that error does (`screencast-call` prints it as its final word).
public enum CallError: Error, CustomStringConvertible {
    /// The shared video source: a bad configuration, a dump that does not read, the socket in use, ….
    case source(VideoSourceError)
    /// An output could not be made or started: the recording's file cannot be created, ….
    case output(name: String, VideoSourceError)
    /// An RTMP destination or MP4 recording could not be made (a bad URL, an unreadable key file).
    case stream(name: String, StreamingError)
    /// Our DTLS certificate could not be made (viewers, SFU leg), or the HTTPS identity.
    case certificate(DTLSError)
    /// End-to-end encryption: the key could not be derived or an encryptor made.
    case encryption(FrameCryptoError)
    /// The key file was refused when read again for a rotation (at start the caller reads it).
    case keyFile(E2EEKeyFileError)
    /// A rotation was asked of a call that does not encrypt.
    case notEncrypting
    /// `start()` on a call that has started (or stopped).
    case alreadyStarted
    /// The audio source or an audio encoder could not be made (a test tone out of range; the codec's library).
    case audio(String)
    /// An output added that consumes what the call has no encoding of (`track`/`codec`), or whose inlet carries
    /// another track than it says it consumes.
    case unsupportedSelection(output: String, selection: String)
    /// The page's address (the configuration's `http`) could not be bound; `https` with HTTPS, `share` in share mode
    /// (whose page must stay reachable from other machines: no loopback, no `off`); `explicit` when the address
    /// was chosen (`--http`) rather than the default.
    case httpUnavailable(endpoint: String, explicit: Bool, https: Bool, share: Bool, cause: String)
    /// `screencast-call status` or `kick`: the running call could not be reached, or refused (why).
    case control(String)

    public var description: String {
        switch self {
        case .source(let error): "\(error)"
        case .output(_, let error): "\(error)"
        case .stream(let name, let error): "\(name): \(error)"
        case .certificate(let error): "\(error)"
        case .encryption(let error): "\(error)"
        case .keyFile(let error): "\(error)"
        case .notEncrypting: "the call does not encrypt: no key to rotate"
        case .alreadyStarted: "the call has already started"
        case .audio(let reason): "audio: \(reason)"
        case .unsupportedSelection(let output, let selection): "output \(output) consumes \(selection), which this call does not encode"
        case .control(let reason): reason
        case .httpUnavailable(let endpoint, let explicit, let https, let share, let cause):
            httpUnavailableText(endpoint: endpoint, explicit: explicit, https: https, share: share, cause: cause)
        }
    }

    private func httpUnavailableText(endpoint: String, explicit: Bool, https: Bool, share: Bool, cause: String) -> String {
        let which = explicit ? "--http \(endpoint)" : "the default \(https ? "HTTPS" : "HTTP") address \(endpoint)"
        let instead = share
            ? "pass --http 0.0.0.0:PORT (0 picks a free port)"
            : https ? "pass --http 127.0.0.1:PORT (0 picks a free port)" : "pass --http 127.0.0.1:PORT (0 picks a free port) or --http off"
        return "cannot serve the viewer page on \(which): \(cause); \(instead)"
    }
}
