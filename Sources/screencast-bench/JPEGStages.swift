import Media

/// JPEG in both directions: the agent's BGRX → JPEG (q80, 4:2:0 and 4:4:4) and the call's JPEG → I420.
enum JPEGStages {
    static let sizes = [("1080p", 1920, 1080), ("2160p", 3840, 2160)]

    /// BGRX → JPEG q80 with libturbojpeg, as the agent encodes captures (ms per frame). `image` is a real
    /// screen when given (see ``ShmCaptureStage``), else a synthetic desktop of each size.
    static func encodeBGRX(runs: Int, image: BGRXImage? = nil, label: String? = nil) throws -> [Measurement] {
        let encoder = try BGRXJPEGEncoder()
        var results: [Measurement] = []
        let pictures = image.map { [(label ?? "\($0.height)p", $0)] } ?? sizes.map { ($0.0, SyntheticPictures.bgrx(width: $0.1, height: $0.2)) }
        for (name, picture) in pictures {
            for subsampling in [JPEGSubsampling.yuv420, .yuv444] {
                var jpeg: [UInt8] = []
                let seconds = try picture.withPixels { pixels in
                    try time(runs) { try encoder.encode(pixels, quality: 80, subsampling: subsampling, into: &jpeg) }
                }
                let tag = subsampling == .yuv420 ? "4:2:0" : "4:4:4"
                results.append(Measurement(
                    stage: "JPEG encode BGRX q80 \(tag) \(name)\(image == nil ? " synthetic" : "")", unit: "ms",
                    values: seconds.map { $0 * 1e3 }, detail: [("bytes", .number(jpeg.count))]))
            }
        }
        return results
    }

    /// I420 → JPEG q80 4:2:0 (the dump tool's path; ms per frame), synthetic pictures.
    static func encodeI420(runs: Int) throws -> [Measurement] {
        let encoder = try JPEGEncoder()
        return try sizes.map { label, width, height in
            let picture = SyntheticPictures.i420(width: width, height: height, colorSpace: .bt601Full)
            var jpeg: [UInt8] = []
            let seconds = try time(runs) { try encoder.encode(picture, quality: 80, into: &jpeg) }
            return Measurement(stage: "JPEG encode I420 q80 4:2:0 \(label) synthetic", unit: "ms", values: seconds.map { $0 * 1e3 })
        }
    }

    /// JPEG → I420 as the call decodes: synthetic q80 4:2:0 pictures of each size, and each given dump's
    /// frames (every frame of the dump once per run; ms per frame).
    static func decode(runs: Int, dumps: [(String, DumpFrames)]) throws -> [Measurement] {
        let decoder = try JPEGDecoder()
        let encoder = try JPEGEncoder()
        var results: [Measurement] = []
        for (label, width, height) in sizes {
            var jpeg: [UInt8] = []
            try encoder.encode(SyntheticPictures.i420(width: width, height: height, colorSpace: .bt601Full), quality: 80, into: &jpeg)
            var output = I420Buffer()
            let seconds = try time(runs) { _ = try decoder.decodeI420(jpeg, into: &output) }
            results.append(Measurement(stage: "JPEG decode → I420 \(label) synthetic", unit: "ms", values: seconds.map { $0 * 1e3 }))
        }
        for (name, dump) in dumps {
            var output = I420Buffer()
            let frames = Array(dump.entries.prefix(60))
            let seconds = try time(runs) { for entry in frames { _ = try decoder.decodeI420(entry.jpeg, into: &output) } }
            results.append(Measurement(
                stage: "JPEG decode → I420 \(name)", unit: "ms", values: seconds.map { $0 * 1e3 / Double(frames.count) },
                detail: [("frames", .number(frames.count)), ("meanBytes", .number(frames.reduce(0) { $0 + $1.jpeg.count } / frames.count))]))
        }
        return results
    }
}
