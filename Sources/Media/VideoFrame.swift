/// One upright picture of the shared video source, ready for the encoder.
///
/// - `picture`: I420 (see `I420Buffer` for the plane layout), already rotated: the sender's
///   `Buffer-Orientation` has been applied with `I420Buffer.rotated(by:into:)`, so `width`×`height` is
///   the size viewers see.
/// - `captureTimestampMicros`: when the picture was captured, CLOCK_MONOTONIC microseconds (the time base
///   of `Buffer-Timestamp` and of `MonotonicClock`). The encoder derives the RTP timestamp (90 kHz) from
///   it, never from the time of sending.
/// - `appliedRotation`: the rotation that was applied to get here (for logs and tests).
///
/// A value type; its planes are shared copy-on-write, so passing a frame between threads copies no pixels.
public struct VideoFrame: Sendable, Equatable {
    /// The pixels, upright.
    public var picture: I420Buffer
    /// Capture time, CLOCK_MONOTONIC microseconds.
    public var captureTimestampMicros: UInt64
    /// The clockwise rotation already applied to `picture`.
    public var appliedRotation: PictureRotation

    /// A frame of `picture` (already upright) captured at `captureTimestampMicros`.
    public init(picture: I420Buffer, captureTimestampMicros: UInt64, appliedRotation: PictureRotation = .none) {
        self.picture = picture
        self.captureTimestampMicros = captureTimestampMicros
        self.appliedRotation = appliedRotation
    }

    /// Width in pixels (after rotation).
    public var width: Int { picture.width }
    /// Height in pixels (after rotation).
    public var height: Int { picture.height }
}
