internal import CAVCodec

/// Why AAC could not be encoded or decoded (the AAC module's one error type).
public enum AACError: Error, Equatable, CustomStringConvertible {
    /// The codec cannot be had as asked (no native `aac` encoder in this libavcodec, a bitrate out of range).
    case unavailable(String)
    /// A libavcodec call failed: which one, and its `AVERROR` code (``description`` adds `av_strerror`'s text).
    case library(what: String, code: Int32)

    public var description: String {
        switch self {
        case .unavailable(let why): why
        case .library(let what, let code):
            "\(what): \(Self.text(code)) (\(code))"
        }
    }

    /// `av_strerror`'s text for `code`.
    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
