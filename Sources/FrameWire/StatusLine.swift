/// The status line a frame message starts with (Protocol/frame-wire.md §2.1):
///
///     status-line = "HTTP/1." ("0" / "1") SP "200" [ SP reason-phrase ] line-end
///
/// Matched byte by byte, so a stream that cannot begin a status line is refused at its first wrong byte,
/// without waiting for a line end (a reader that joined mid-JPEG fails at once).
enum StatusLine {
    /// `HTTP/1.x 200`, where `x` (index 7) is `0` or `1`.
    static let prefix: [UInt8] = Array("HTTP/1.x 200".utf8)

    /// True when `byte` may stand at `index` of ``prefix``.
    static func accepts(_ byte: UInt8, at index: Int) -> Bool {
        if index == 7 { return byte == UInt8(ascii: "0") || byte == UInt8(ascii: "1") }
        return prefix[index] == byte
    }

    /// A message for ``FrameWireError/badStatusLine(_:)``: which byte of the status line broke it.
    static func describe(matched: Int, next byte: UInt8) -> String {
        let shown = (0x21...0x7E).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
        let expected = matched == prefix.count ? "SP, CR or LF" : matched == 7 ? "'0' or '1'" : "'\(Character(Unicode.Scalar(prefix[matched])))'"
        return "\(shown) at status-line byte \(matched + 1), expected \(expected) (HTTP/1.0 or HTTP/1.1 200)"
    }
}
