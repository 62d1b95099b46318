/// Why H.264 encoding failed (the H264 module's one error type).
public enum H264Error: Error, Equatable, CustomStringConvertible {
    /// The settings cannot be used (a size or rate out of range, an unknown preset or profile).
    case invalidSettings(String)
    /// libx264 refused to open an encoder with the settings.
    case openFailed(String)
    /// `x264_encoder_encode` returned an error.
    case encodeFailed(Int)

    public var description: String {
        switch self {
        case .invalidSettings(let why): "H.264: invalid settings: \(why)"
        case .openFailed(let what): "H.264: libx264 could not open an encoder (\(what))"
        case .encodeFailed(let code): "H.264: libx264 failed to encode a picture (\(code))"
        }
    }
}
