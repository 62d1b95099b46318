internal import CX264
public import Media

/// One libx264 encoder (the owner of its `x264_t`, closed in `deinit`): I420 pictures in, H.264 access units
/// out in Annex B (start codes), SPS and PPS in front of every keyframe. Used from one thread at a time.
///
/// Settings (``H264Settings``): preset, `zerolatency`, no B-frames, CBR (ABR with the VBV's rate at the target
/// and a one-second buffer), no scene-cut keyframes (the caller's ``KeyframeCadence`` decides, and forces
/// an IDR through the picture's type), the colour space in the VUI.
public final class H264Encoder {
    public let settings: H264Settings
    private let handle: OpaquePointer
    private var picture = x264_picture_t()

    /// - Throws: ``H264Error/invalidSettings(_:)``, ``H264Error/openFailed(_:)``.
    public init(settings: H264Settings) throws(H264Error) {
        try settings.validate()
        self.settings = settings
        var param = x264_param_t()
        guard x264_param_default_preset(&param, settings.preset, "zerolatency") == 0 else {
            throw .invalidSettings("preset \(settings.preset)")
        }
        param.i_log_level = X264_LOG_ERROR
        param.i_threads = Int32(settings.threads)
        param.b_sliced_threads = 0
        param.i_width = Int32(settings.width)
        param.i_height = Int32(settings.height)
        param.i_csp = X264_CSP_I420
        param.i_fps_num = UInt32(settings.framesPerSecond)
        param.i_fps_den = 1
        param.i_timebase_num = 1
        param.i_timebase_den = 1_000_000  // pts in microseconds of capture time
        param.b_vfr_input = 0  // rate control by the nominal frame rate: a frame is 1/fps of the budget
        param.i_bframe = 0
        param.i_keyint_max = Int32(X264_KEYINT_MAX_INFINITE)
        param.i_keyint_min = 1
        param.i_scenecut_threshold = 0
        param.b_repeat_headers = 1
        param.b_annexb = 1
        param.rc.i_rc_method = X264_RC_ABR
        param.rc.i_bitrate = Int32(settings.bitsPerSecond / 1000)
        param.rc.i_vbv_max_bitrate = Int32(settings.bitsPerSecond / 1000)
        param.rc.i_vbv_buffer_size = Int32(settings.vbvBufferBits / 1000)
        param.vui.b_fullrange = settings.colorSpace.range == .full ? 1 : 0
        param.vui.i_colorprim = 6  // SMPTE 170M (BT.601 525)
        param.vui.i_transfer = 6
        param.vui.i_colmatrix = 6
        guard x264_param_apply_profile(&param, settings.profile) == 0 else { throw .invalidSettings("profile \(settings.profile)") }
        guard let handle = cx264_encoder_open(&param) else {
            throw .openFailed("\(settings.width)x\(settings.height) \(settings.framesPerSecond) fps \(settings.bitsPerSecond) bit/s")
        }
        self.handle = handle
        x264_picture_init(&picture)
    }

    deinit { x264_encoder_close(handle) }

    /// The target now, bits per second (``settings``' until ``setBitrate(_:)``).
    public private(set) lazy var bitsPerSecond = settings.bitsPerSecond

    /// Changes the target (CBR: the VBV's rate too, and its one-second buffer) from the next frame on, without a
    /// keyframe (`x264_encoder_reconfig`).
    /// - Throws: ``H264Error/invalidSettings(_:)`` for a rate under 100 kbit/s or one x264 refuses.
    public func setBitrate(_ bitsPerSecond: Int) throws(H264Error) {
        guard bitsPerSecond >= H264Settings.minimumBitsPerSecond else { throw .invalidSettings("bitrate \(bitsPerSecond) bit/s") }
        var param = x264_param_t()
        x264_encoder_parameters(handle, &param)
        let kbps = Int32(bitsPerSecond / 1000)
        param.rc.i_bitrate = kbps
        param.rc.i_vbv_max_bitrate = kbps
        param.rc.i_vbv_buffer_size = kbps
        guard x264_encoder_reconfig(handle, &param) >= 0 else { throw .invalidSettings("bitrate \(bitsPerSecond) bit/s refused by x264") }
        self.bitsPerSecond = bitsPerSecond
    }

    /// Encodes `frame` (its size must be the settings'); nil when the encoder gave nothing (it holds no frames
    /// with these settings, so that does not happen in practice).
    /// - Parameter forceKeyframe: make it an IDR (with SPS and PPS in front).
    public func encode(_ frame: VideoFrame, forceKeyframe: Bool) throws(H264Error) -> EncodedFrame? {
        let pictureIn = frame.picture
        guard pictureIn.width == settings.width, pictureIn.height == settings.height else {
            throw .invalidSettings("picture \(pictureIn.width)x\(pictureIn.height) into an encoder of \(settings.width)x\(settings.height)")
        }
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var out = x264_picture_t()
        let size = try pictureIn.withUnsafePlanes { (y, u, v) throws(H264Error) -> Int32 in
            picture.img.i_csp = X264_CSP_I420
            picture.img.i_plane = 3
            picture.img.i_stride.0 = Int32(pictureIn.yStride)
            picture.img.i_stride.1 = Int32(pictureIn.uvStride)
            picture.img.i_stride.2 = Int32(pictureIn.uvStride)
            picture.img.plane.0 = UnsafeMutablePointer(mutating: y.baseAddress)
            picture.img.plane.1 = UnsafeMutablePointer(mutating: u.baseAddress)
            picture.img.plane.2 = UnsafeMutablePointer(mutating: v.baseAddress)
            picture.i_type = forceKeyframe ? X264_TYPE_IDR : X264_TYPE_AUTO
            picture.i_pts = Int64(frame.captureTimestampMicros)
            let size = x264_encoder_encode(handle, &nals, &count, &picture, &out)
            picture.img.plane = (nil, nil, nil, nil)
            guard size >= 0 else { throw .encodeFailed(Int(size)) }
            return size
        }
        guard size > 0, let nals, count > 0 else { return nil }
        // The NALs' payloads are contiguous in x264's buffer (documented: "all of the NAL units are
        // contiguous"), starting at the first one's.
        let bytes = Array(UnsafeBufferPointer(start: nals[0].p_payload, count: Int(size)))
        return EncodedFrame(
            bytes: bytes, isKeyframe: out.b_keyframe != 0, captureTimestampMicros: UInt64(out.i_pts),
            width: settings.width, height: settings.height)
    }
}
