import Foundation
import Media

/// A VP8 frame of a recording that libvpx decoded without showing a picture (our encoder shows every one).
public struct UnshownFrame: Error, CustomStringConvertible {
    public var index: Int
    public var description: String { "IVF frame \(index) decoded without a picture" }
}

/// Every frame of an IVF file decoded with libvpx, in order with one decoder: its pts (timebase units), the
/// pts in microseconds (through the header's timebase), whether it is a keyframe, and the picture (BT.601
/// limited range).
/// - Throws: the file's read error, `MediaError` for a malformed file or frame, `UnshownFrame`.
public func decodeIVF(_ path: String) throws -> (
    header: IVFFileHeader, frames: [(pts: UInt64, micros: UInt64, keyframe: Bool, picture: I420Buffer)]
) {
    let reader = try IVFReader(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    let decoder = try VP8Decoder()
    let (numerator, denominator) = (UInt64(reader.header.timebaseNumerator), UInt64(reader.header.timebaseDenominator))
    var out: [(UInt64, UInt64, Bool, I420Buffer)] = []
    for (index, record) in reader.frames.enumerated() {
        var picture = I420Buffer()
        guard try decoder.decode(record.bytes, into: &picture) else { throw UnshownFrame(index: index) }
        // VP8 frame tag (RFC 6386 §9.1): bit 0 of the first byte is 0 for a keyframe.
        out.append((record.pts, record.pts * numerator * 1_000_000 / denominator, record.bytes[0] & 1 == 0, picture))
    }
    return (reader.header, out)
}
