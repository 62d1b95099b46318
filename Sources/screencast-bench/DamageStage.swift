import FrameWire
import Media

/// What `Buffer-Damage` saves per 1080p frame (Protocol/frame-wire.md §2.9), ms, interleaved so each pair
/// sees the same load: the call's `BGRX-SHM` conversion of the whole slot (`ARGBToI420`, what every frame
/// cost before) against copying the last I420 picture and converting only the damage (what
/// `WireFramePipeline` does now; the agent's I420 wire does the same), and the agent's write of the whole
/// 8 MB slot against writing only what the slot lacks (the last frame's damage and this one's).
/// Damage shapes: one 320×48 line of typing, a 1280×720 window being dragged, a 1920×1016 scroll (the
/// whole terminal but its title bar), and the whole picture (the worst case: a copy on top of the conversion).
enum DamageStage {
    static let shapes: [(name: String, rect: DamageRect)] = [
        ("typing 320x48", DamageRect(x: 96, y: 512, width: 320, height: 48)),
        ("window 1280x720", DamageRect(x: 320, y: 180, width: 1280, height: 720)),
        ("scroll 1920x1016", DamageRect(x: 0, y: 64, width: 1920, height: 1016)),
        ("whole 1920x1080", DamageRect(x: 0, y: 0, width: 1920, height: 1080)),
    ]

    static func measure(runs: Int) throws -> [Measurement] {
        let (width, height) = (1920, 1080)
        let screen = SyntheticPictures.bgrx(width: width, height: height)
        var last = I420Buffer()
        try BGRXToYUV.convertToI420(screen, range: .limited, into: &last)
        var target = I420Buffer()
        var slot = [UInt8](repeating: 0, count: width * height * 4)
        var whole: [Double] = []
        var wholeCopy: [Double] = []
        var partial = [[Double]](repeating: [], count: shapes.count)
        var partialCopy = [[Double]](repeating: [], count: shapes.count)
        for _ in 0..<runs {
            whole += try time(1) { try BGRXToYUV.convertToI420(screen, range: .limited, into: &target) }
            wholeCopy += time(1) { screen.withUnsafeBytes { source in slot.withUnsafeMutableBytes { $0.copyMemory(from: source) } } }
            for (index, shape) in shapes.enumerated() {
                let region = [(x: shape.rect.x, y: shape.rect.y, width: shape.rect.width, height: shape.rect.height)]
                partial[index] += try time(1) {
                    last.copy(into: &target)
                    try screen.withPixels { (pixels) throws(MediaError) in
                        try BGRXToYUV.convertRegionsToI420(pixels, regions: region, range: .limited, into: &target)
                    }
                }
                partialCopy[index] += time(1) {
                    screen.withUnsafeBytes { source in
                        slot.withUnsafeMutableBytes { out in
                            for rect in [shape.rect, shape.rect] {  // the last frame's damage, then this one's
                                for y in rect.y..<(rect.y + rect.height) {
                                    let offset = y * width * 4 + rect.x * 4
                                    (out.baseAddress! + offset).copyMemory(from: source.baseAddress! + offset, byteCount: rect.width * 4)
                                }
                            }
                        }
                    }
                }
            }
        }
        var results = [Measurement(stage: "damage: call BGRX-SHM → I420, whole slot (ARGBToI420) 1080p", unit: "ms", values: whole.map { $0 * 1e3 })]
        for (index, shape) in shapes.enumerated() {
            results.append(Measurement(stage: "damage: call copy last I420 + convert \(shape.name)", unit: "ms", values: partial[index].map { $0 * 1e3 }))
        }
        results.append(Measurement(stage: "damage: agent shm slot write, whole 8 MB", unit: "ms", values: wholeCopy.map { $0 * 1e3 }))
        for (index, shape) in shapes.enumerated() {
            results.append(Measurement(stage: "damage: agent shm slot write, 2× \(shape.name)", unit: "ms", values: partialCopy[index].map { $0 * 1e3 }))
        }
        return results
    }
}
