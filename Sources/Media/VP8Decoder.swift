internal import CVPX

/// VP8 decoding with libvpx, for tests and checks (the call process itself only encodes).
///
/// Owns one libvpx decoder context, created in `init` and destroyed in `deinit`. Frames must be fed in
/// stream order, starting with a keyframe. One thread at a time: a decoder is not `Sendable`.
public final class VP8Decoder {
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    /// - Throws: `MediaError.vp8Decoder` if libvpx cannot create the decoder.
    public init() throws(MediaError) {
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        var config = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
        guard cvpx_dec_init(context, &config, 0) == VPX_CODEC_OK else {
            let text = vpx_codec_error(context).map { String(cString: $0) } ?? "unknown error"
            context.deallocate()
            throw .vp8Decoder("init: \(text)")
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one VP8 frame into `picture`, which takes the frame's size and the colour space BT.601
    /// limited range (VP8's).
    /// - Returns: true when a picture came out (false for a frame libvpx decodes without showing).
    /// - Throws: `MediaError.vp8Decoder` for empty, corrupt or out-of-order data.
    @discardableResult
    public func decode(_ bytes: [UInt8], into picture: inout I420Buffer) throws(MediaError) -> Bool {
        guard !bytes.isEmpty else { throw .vp8Decoder("empty frame") }
        let status = bytes.withUnsafeBufferPointer {
            vpx_codec_decode(context, $0.baseAddress, UInt32($0.count), nil, 0)
        }
        guard status == VPX_CODEC_OK else {
            var text = vpx_codec_error(context).map { String(cString: $0) } ?? "unknown error"
            if let detail = vpx_codec_error_detail(context) { text += " (\(String(cString: detail)))" }
            throw .vp8Decoder(text)
        }
        var iterator: vpx_codec_iter_t?
        var produced = false
        while let image = vpx_codec_get_frame(context, &iterator) {
            let img = image.pointee
            guard img.fmt == VPX_IMG_FMT_I420 else {
                throw .vp8Decoder("unexpected image format \(img.fmt.rawValue)")
            }
            let (width, height) = (Int(img.d_w), Int(img.d_h))
            picture.resize(width: width, height: height)
            picture.colorSpace = .bt601Limited  // what a VP8 bitstream means (RFC 6386 §9.2)
            let (yStride, uvStride) = (picture.yStride, picture.uvStride)
            let (cw, ch) = (picture.chromaWidth, picture.chromaHeight)
            picture.withUnsafeMutablePlanes { y, u, v in
                copyPlane(from: img.planes.0, stride: Int(img.stride.0), to: y.baseAddress!, stride: yStride,
                          width: width, height: height)
                copyPlane(from: img.planes.1, stride: Int(img.stride.1), to: u.baseAddress!, stride: uvStride,
                          width: cw, height: ch)
                copyPlane(from: img.planes.2, stride: Int(img.stride.2), to: v.baseAddress!, stride: uvStride,
                          width: cw, height: ch)
            }
            produced = true
        }
        return produced
    }

    private func copyPlane(
        from source: UnsafeMutablePointer<UInt8>?, stride sourceStride: Int,
        to destination: UnsafeMutablePointer<UInt8>, stride destinationStride: Int, width: Int, height: Int
    ) {
        guard let source, width > 0 else { return }
        for row in 0..<height {
            (destination + row * destinationStride).update(from: source + row * sourceStride, count: width)
        }
    }
}

/// A decoder holds a libvpx context: use it from one thread at a time.
@available(*, unavailable)
extension VP8Decoder: Sendable {}
