import FrameWire
import Media

/// Turns a captured BGRX picture into a frame's body in the configured format: scaled to the frame size, then a
/// JPEG (libturbojpeg), BT.601 limited-range I420 (libyuv; only the damaged rectangles when few changed), or a
/// copy into the slots of the memory shared with the call (`--format shm`). The one encode path of every
/// capturer: the X11 loop (``CaptureLoop``) and the portal's (``PortalCaptureLoop``) both hand their pixels here.
///
/// Not thread-safe: owned and used by one capture thread.
final class FrameBodyMaker {
    /// The body of one frame, with how it was made.
    struct Body {
        var bytes: [UInt8]
        var shared: (picture: SharedPicture, reference: SharedPictureReference)?
        /// The JPEG quality used, 0 for a raw frame.
        var quality: Int
        var subsampling: JPEGSubsampling
    }

    private let configuration: CaptureConfiguration
    private let encoder: BGRXJPEGEncoder
    private let paintOver: PaintOver?
    private var scaled = BGRXImage()
    /// `--format shm`: the memory the frames are written to, and the slot the next one takes.
    private var sharedPicture: SharedPicture?
    private var nextSlot = 0
    private var slotRefresh = SharedSlotRefresh()

    /// - Throws: ``CaptureError/encodeFailed(_:)`` when libturbojpeg cannot be set up.
    init(configuration: CaptureConfiguration) throws(CaptureError) {
        self.configuration = configuration
        paintOver = configuration.effectivePaintOver
        do {
            encoder = try BGRXJPEGEncoder()
        } catch {
            throw .encodeFailed(error)
        }
    }

    /// The body of a `kind` frame of `frameWidth`×`frameHeight` made from `pixels` (the captured area, native
    /// size). `damage` is the frame's `Buffer-Damage` (nil: whole); `last` the frame before, whose I420 planes
    /// a partial conversion starts from.
    func make(
        _ pixels: BGRXPixels, frameWidth: Int, frameHeight: Int, kind: CapturedFrame.Kind, damage: [DamageRect]?,
        last: CapturedFrame?
    ) throws(CaptureError) -> Body {
        let raw = configuration.format != .jpeg
        let quality = raw ? 0 : kind == .paintOver ? paintOver?.quality ?? configuration.quality : configuration.quality
        let subsampling = raw ? .yuv420 : kind == .paintOver ? paintOver?.subsampling ?? configuration.subsampling : configuration.subsampling
        var body: [UInt8] = []
        var shared: (picture: SharedPicture, reference: SharedPictureReference)?
        let range = configuration.format.colorRange
        do {
            let native = frameWidth == pixels.width && frameHeight == pixels.height
            if !native {
                try BGRXScaler.scale(pixels, toWidth: frameWidth, height: frameHeight, into: &scaled)
            }
            if configuration.format == .shm {
                shared = native ? try writeShared(pixels, damage: damage)
                    : try scaled.withPixels { (scaledPixels) throws(MediaError) in try writeShared(scaledPixels, damage: damage) }
                body = [0x0A]
            } else if raw, let damage, let last, last.format == .i420, last.width == frameWidth, last.height == frameHeight,
                      Double(BufferDamage.coveredPixels(damage)) <= DamageAccumulator.partialConversionLimit * Double(last.width * last.height) {
                // Only the changed rectangles converted, into a copy of the last frame's planes.
                var picture = try I420Buffer(width: last.width, height: last.height, bytes: last.body,
                                             colorSpace: YCbCrColorSpace(range: range))
                let regions = damage.map { (x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
                if native {
                    try BGRXToYUV.convertRegionsToI420(pixels, regions: regions, range: range, into: &picture)
                } else {
                    try scaled.withPixels { (scaledPixels) throws(MediaError) in
                        try BGRXToYUV.convertRegionsToI420(scaledPixels, regions: regions, range: range, into: &picture)
                    }
                }
                body = picture.bytes
            } else if raw {
                // A fresh buffer per frame (the frame, and its keepalive repeats, keep it after this returns),
                // not zero-filled first: ARGBToI420 writes every byte.
                let count = I420Buffer.byteCount(width: frameWidth, height: frameHeight)
                var picture = try I420Buffer(
                    width: frameWidth, height: frameHeight,
                    bytes: [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count },
                    colorSpace: YCbCrColorSpace(range: range))
                if native {
                    try BGRXToYUV.convertToI420(pixels, range: range, into: &picture)
                } else {
                    try BGRXToYUV.convertToI420(scaled, range: range, into: &picture)
                }
                body = picture.bytes
            } else if native {
                try encoder.encode(pixels, quality: quality, subsampling: subsampling, into: &body)
            } else {
                body = try encoder.encode(scaled, quality: quality, subsampling: subsampling)
            }
        } catch {
            throw .encodeFailed(error)
        }
        return Body(bytes: body, shared: shared, quality: quality, subsampling: subsampling)
    }

    /// `pixels` copied into the next slot of the shared memory (a new memfd, the next generation, when the
    /// size changed), between the slot's seqlock writes: only the rows of the rectangles the slot lacks
    /// (``SharedSlotRefresh``) when `damage` is known.
    private func writeShared(_ pixels: BGRXPixels, damage: [DamageRect]?) throws(MediaError) -> (picture: SharedPicture, reference: SharedPictureReference) {
        if sharedPicture.map({ $0.width != pixels.width || $0.height != pixels.height }) ?? true {
            do throws(SharedPictureError) {
                sharedPicture = try SharedPicture.create(width: pixels.width, height: pixels.height, generation: (sharedPicture?.generation ?? 0) + 1)
            } catch {
                throw .invalidArgument("shared memory: \(error)")
            }
            nextSlot = 0
            slotRefresh.reset()
        }
        let picture = sharedPicture!
        let slot = nextSlot
        nextSlot = (nextSlot + 1) % SharedPicture.slotCount
        let odd = picture.beginWrite(slot: slot)
        let target = picture.mutablePixels(slot: slot)
        let row = pixels.width * 4
        if let regions = slotRefresh.regions(slot: slot, damage: damage, width: pixels.width, height: pixels.height) {
            for r in regions {
                for y in r.y..<(r.y + r.height) {
                    (target.baseAddress! + y * row + r.x * 4)
                        .copyMemory(from: pixels.base.baseAddress! + y * pixels.stride + r.x * 4, byteCount: r.width * 4)
                }
            }
        } else if pixels.stride == row {
            target.baseAddress!.copyMemory(from: pixels.base.baseAddress!, byteCount: row * pixels.height)
        } else {
            for y in 0..<pixels.height {
                (target.baseAddress! + y * row).copyMemory(from: pixels.base.baseAddress! + y * pixels.stride, byteCount: row)
            }
        }
        let version = picture.endWrite(slot: slot, began: odd)
        return (picture, SharedPictureReference(generation: picture.generation, slot: slot, version: version))
    }
}
