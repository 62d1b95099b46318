import FrameWire
import Media

/// The last `BGRX-SHM` picture a ``WireFramePipeline`` made, and what it was made from: the frame's
/// `Buffer-Memory` generation and `Buffer-Sequence`.
struct LastSharedPicture {
    var picture: I420Buffer
    var generation: UInt64
    var sequence: UInt64
}

extension WireFramePipeline {
    /// Beyond this share of the picture damaged, the whole slot is converted: copying the last picture
    /// and converting most of it costs more than converting it all (`screencast-bench --stage damage`:
    /// at 1080p a 1920×1016 scroll costs as much as the whole, the whole damage 30 % more).
    static let partialConversionLimit = 0.5

    /// The damage to convert for a `BGRX-SHM` frame of `header`, with `target` (a pooled buffer) then
    /// holding the last picture; nil when the frame must be converted whole: no usable damage (absent or
    /// malformed), no last picture, not the very next `Buffer-Sequence` (a frame the agent or this reader
    /// dropped: §2.9), another generation or size, more than ``partialConversionLimit`` of it damaged. The last picture is let go either way, so `target` is
    /// the only owner of its storage (a pooled buffer may be that very storage: then nothing is copied).
    func previousPicture(for header: FrameHeader, width: Int, height: Int, into target: inout I420Buffer) -> [DamageRect]? {
        guard let last = lastShared else { return nil }
        lastShared = nil
        guard let damage = header.damage, let sequence = header.sequence, sequence == last.sequence &+ 1,
              header.memory?.generation == last.generation, last.picture.width == width, last.picture.height == height
        else { return nil }
        guard Double(BufferDamage.coveredPixels(damage)) <= Self.partialConversionLimit * Double(width * height) else { return nil }
        let shared = target.bytes.withUnsafeBufferPointer { a in last.picture.bytes.withUnsafeBufferPointer { a.baseAddress == $0.baseAddress } }
        if !shared || target.width != width || target.height != height || target.colorSpace != last.picture.colorSpace {
            last.picture.copy(into: &target)
        }
        return damage
    }

    /// Keeps `picture` (shared, not copied) as the picture the next frame's damage updates.
    func keepShared(_ picture: I420Buffer, header: FrameHeader) {
        guard let sequence = header.sequence, let memory = header.memory else { return }
        lastShared = LastSharedPicture(picture: picture, generation: memory.generation, sequence: sequence)
    }

    /// A malformed `Buffer-Damage`: counted, logged rate-limited (the frame is taken whole).
    func noteDamageFault(_ fault: BufferDamageError) {
        damageFaults += 1
        guard let suppressed = damageFaultLog.admit() else { return }
        logger.warning("Buffer-Damage ignored: the frame is taken whole", ["fault": fault.kind, "detail": "\(fault)", "suppressed": suppressed])
    }
}
