import FrameCrypto
import Media
import ScreencastSupport

/// End-to-end encryption of encoded frames (FrameCrypto: AES-128-GCM through OpenSSL, the FrameCryptor
/// format): what `--e2ee-key-file` adds per encoded frame, once for all viewers. The frames are real VP8
/// output (the call's settings) of a synthetic 1080p desktop: its keyframe, and the delta frame after a
/// 400×300 area of it changed. Also the one-off cost of deriving a key from a passphrase (PBKDF2, 100 000
/// iterations).
enum FrameCryptoStage {
    static func measure(runs: Int) throws -> [Measurement] {
        let (width, height) = (1920, 1080)
        var picture = SyntheticPictures.i420(width: width, height: height, colorSpace: .bt601Limited)
        let encoder = try VP8Encoder(settings: VP8EncoderSettings(
            width: width, height: height, bitrateKbps: VP8EncoderSettings.defaultBitrateKbps(width: width, height: height, framesPerSecond: 30)))
        guard let keyframe = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: 0)), keyframe.isKeyframe else {
            throw UsageError("frame-crypto: the encoder gave no keyframe")
        }
        picture.withUnsafeMutablePlanes { y, _, _ in
            for row in 400..<700 {
                for col in 600..<1000 { y[row * width + col] &+= 37 }
            }
        }
        guard let delta = try encoder.encode(VideoFrame(picture: picture, captureTimestampMicros: 33_333)), !delta.isKeyframe else {
            throw UsageError("frame-crypto: the encoder gave no delta frame")
        }

        let key = try FrameKey.derive(passphrase: "screencast bench passphrase")
        let encryptor = try FrameEncryptor(key: key, keyIndex: 0)
        let decryptor = FrameDecryptor()
        try decryptor.setKey(key, at: 0)
        var results: [Measurement] = []
        for (label, frame) in [("keyframe", keyframe), ("delta frame", delta)] {
            let perCall = try (0..<runs).map { _ in try timePerCall { _ = try encryptor.encrypt(frame.bytes) } }
            guard try decryptor.decrypt(try encryptor.encrypt(frame.bytes)) == frame.bytes else {
                throw UsageError("frame-crypto: a \(label) did not survive the round trip")
            }
            results.append(Measurement(
                stage: "E2EE encrypt 1080p VP8 \(label)", unit: "µs", values: perCall.map { $0 * 1e6 },
                detail: [("bytes", .number(frame.bytes.count)),
                         ("MBps", .double(Double(frame.bytes.count) / Statistics.median(perCall) / 1e6))]))
        }
        let sealedKeyframe = try encryptor.encrypt(keyframe.bytes)
        let decrypt = try (0..<runs).map { _ in try timePerCall { _ = try decryptor.decrypt(sealedKeyframe) } }
        results.append(Measurement(
            stage: "E2EE decrypt 1080p VP8 keyframe", unit: "µs", values: decrypt.map { $0 * 1e6 },
            detail: [("bytes", .number(keyframe.bytes.count))]))
        let derive = try time(runs) { _ = try FrameKey.derive(passphrase: "screencast bench passphrase") }
        results.append(Measurement(stage: "E2EE key from passphrase (PBKDF2 100000)", unit: "ms", values: derive.map { $0 * 1e3 }))
        return results
    }
}
