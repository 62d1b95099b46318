import Media

/// I420 rotation with libyuv (`Buffer-Orientation` other than upright; ms per frame).
enum RotationStage {
    static func measure(runs: Int) throws -> [Measurement] {
        var results: [Measurement] = []
        for (label, width, height) in JPEGStages.sizes {
            let picture = SyntheticPictures.i420(width: width, height: height, colorSpace: .bt601Limited)
            var output = I420Buffer()
            for rotation in [PictureRotation.clockwise90, .clockwise180] {
                let seconds = try time(runs) { try picture.rotated(by: rotation, into: &output) }
                results.append(Measurement(stage: "rotate I420 \(rotation.degrees)° \(label)", unit: "ms", values: seconds.map { $0 * 1e3 }))
            }
        }
        return results
    }
}
