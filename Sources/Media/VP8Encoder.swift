internal import CVPX

/// Software VP8 encoding with libvpx in real-time mode, one instance per call.
///
/// Owns one libvpx encoder context (`vpx_codec_ctx_t`, created in `init`, destroyed in `deinit`) and the
/// `vpx_image_t` that points libvpx at a frame's planes (no copy). Settings: `VP8EncoderSettings`, plus the
/// fixed real-time choices listed there.
///
/// - Keyframes: the first frame, the first frame after a size change, and frames encoded with
///   `forceKeyframe`; libvpx places none of its own.
/// - A frame of another size re-creates the libvpx context with the new size (libvpx cannot grow a VP8
///   encoder in place); the object and its owner stay the same, and that frame is a keyframe.
/// - Bitrate and quantizer range change at run time through `vpx_codec_enc_config_set`, without
///   re-creating anything.
/// - Non-reference frames: `encode(…, updatesReferences: false)` makes an interframe that updates no
///   reference buffer and no entropy context (`VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_GF |
///   VP8_EFLAG_NO_UPD_ARF | VP8_EFLAG_NO_UPD_ENTROPY`): a receiver may skip it (``EncodedFrame/isDroppable``).
///   The next frame is predicted from the last reference frame, as if the skipped one had not been made.
///   The flags alone are not enough: libvpx's one-pass CBR rate control refreshes the golden frame on its
///   own schedule (every 40 frames at 320×240), on whatever frame is due, non-reference or not, and its
///   `VPX_FRAME_IS_DROPPABLE` is computed after that refresh flag is cleared, so it does not tell. The
///   first non-reference frame therefore turns on error-resilient mode (``isErrorResilient``,
///   `g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT`, libwebrtc's choice for VP8 temporal layers), which
///   stops those refreshes and re-sends the loop-filter deltas every frame; turn it off with
///   ``setErrorResilient(_:)`` once no more non-reference frames are wanted (it costs bytes: no frame
///   carries its probability updates to the next). Measured against the alternative that keeps it off
///   (no prediction from golden or altref after a non-reference frame, both refreshed by the next reference
///   frame; bit-exact too): 320×240 moving window at q24 ×1.13–×1.25 against ×1.46–×2.09 of the bytes
///   without the cadence, window-drag 640×360 about equal, 1280×720 5 % more: the golden frame it keeps
///   serves as a long-term reference for revealed background.
/// - Timestamps: pts is the capture time in microseconds (timebase 1/1 000 000), forced to increase by at
///   least ``minimumFrameSpacingMicros``.
/// - Colours: BT.601 limited range pictures only (``YCbCrColorSpace/bt601Limited``). VP8 has no range flag
///   (RFC 6386 §9.2 names BT.601) and every decoder (Chromium, libvpx, ffmpeg, GStreamer) shows its samples
///   as limited range, so a full-range picture is refused with `MediaError.wrongColorSpace` instead of being
///   shown with stretched contrast and saturation.
///
/// Blocking: `encode` runs libvpx synchronously (milliseconds per frame); call it on a thread of its own.
/// One thread at a time: an encoder is not `Sendable`.
public final class VP8Encoder {
    /// The settings in force (the size follows the last frame encoded).
    public private(set) var settings: VP8EncoderSettings
    /// Frames handed to libvpx since `init` (including ones it dropped).
    public private(set) var framesSubmitted = 0

    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private let config: UnsafeMutablePointer<vpx_codec_enc_cfg_t>
    private let image: UnsafeMutablePointer<vpx_image_t>
    private var isOpen = false
    /// Frames handed to this libvpx context (the first is a keyframe).
    private var framesSinceOpen = 0
    /// Error-resilient mode (`g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT`): on from the first
    /// non-reference frame until ``setErrorResilient(_:)`` turns it off; kept across a resize.
    public private(set) var isErrorResilient = false
    /// The quantizer range currently configured in libvpx (differs from settings during refinement).
    private var appliedQuantizers: (min: Int, max: Int)
    private var lastPts: Int64 = -1
    /// The duration given with every frame, µs (`vpx_codec_encode`'s `duration`): the nominal interval at
    /// 30 fps. libvpx reads the frame rate from successive frames' ends (pts + duration), so with one fixed
    /// duration it measures each frame's real spacing. The gap since the previous frame, given as the
    /// duration, made one late frame end when the next one did, and libvpx then dropped most frames for
    /// seconds (81 of 437 in `Tests/Fixtures/encoder-timing/sfu-republish.txt`).
    public static let nominalFrameDurationMicros: UInt64 = 33_333
    /// The least spacing of two frames' pts that libvpx is shown, µs: 1/240 s, the fastest the call encodes
    /// (`--max-fps` 240). A frame may follow the one before by microseconds (a keyframe request re-encodes
    /// the last picture just before a new picture arrives); libvpx read that as a frame rate of thousands a
    /// second and went on dropping most frames for seconds (122 of 506 when
    /// `Tests/Fixtures/encoder-timing/sfu-rekey.txt` is replayed: a new frame 12 µs after a requested keyframe). Such a
    /// frame's pts is moved this far past the previous one (at most this far from its capture time; the RTP
    /// timestamp still comes from the capture time).
    public static let minimumFrameSpacingMicros: Int64 = 4_167
    private var firstCapture: UInt64?

    /// Creates the libvpx encoder.
    /// - Throws: `MediaError.invalidArgument` for settings out of range, `.vp8Encoder` if libvpx refuses
    ///   the configuration or a control.
    public init(settings: VP8EncoderSettings) throws(MediaError) {
        try settings.validate()
        self.settings = settings
        appliedQuantizers = (settings.minQuantizer, settings.maxQuantizer)
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        config = .allocate(capacity: 1)
        config.initialize(to: vpx_codec_enc_cfg_t())
        image = .allocate(capacity: 1)
        image.initialize(to: vpx_image_t())
        do {
            try open()
        } catch {
            context.deallocate()
            config.deallocate()
            image.deallocate()
            throw error
        }
    }

    deinit {
        close()
        context.deallocate()
        config.deallocate()
        image.deallocate()
    }

    /// Encodes one frame.
    ///
    /// - Parameters:
    ///   - frame: the picture, BT.601 limited range (what VP8 means: the bitstream has no range flag and
    ///     every decoder reads it so); a size other than `settings.width`×`height` re-creates the encoder first.
    ///   - forceKeyframe: encode a keyframe (`VPX_EFLAG_FORCE_KF`).
    ///   - quantizerCeiling: for this frame, cap the worst quantizer at this value (clamped to
    ///     `settings.minQuantizer…maxQuantizer`), as idle refinement does to re-encode a static picture
    ///     at a rising quality; nil restores `settings`' range. In screen-content mode libvpx lowers the
    ///     quantizer of interframes by at most 12 of its 128 steps per frame whatever the cap, so a
    ///     picture refines over several frames (measured: 480×272 text from q47 to q12 in six).
    ///   - allowDrop: whether libvpx's rate control may drop this frame (`rateControl.dropFrameThreshold`);
    ///     false for re-encodes a caller budgets itself (refinements, repeats), which would otherwise be
    ///     wasted steps.
    ///   - updatesReferences: false encodes a non-reference frame (`VP8_EFLAG_NO_UPD_LAST |
    ///     VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF | VP8_EFLAG_NO_UPD_ENTROPY`): nothing later is predicted
    ///     from it, so it can be left out of a stream (``EncodedFrame/isDroppable`` is true when libvpx also
    ///     reports `VPX_FRAME_IS_DROPPABLE`). Ignored for a keyframe (forced, or the first after a size
    ///     change): a keyframe always updates every buffer.
    /// - Returns: the VP8 frame, or nil when libvpx dropped it (rate control after an overshoot).
    /// - Throws: `MediaError.wrongColorSpace` for a picture not in BT.601 limited range (nothing is encoded;
    ///   convert it first with ``I420Buffer/convertToLimitedRange()``), `.invalidArgument` for an empty
    ///   picture, `.vp8Encoder` when libvpx fails (the encoder stays usable for the next frame).
    public func encode(
        _ frame: VideoFrame, forceKeyframe: Bool = false, quantizerCeiling: Int? = nil, allowDrop: Bool = true,
        updatesReferences: Bool = true
    ) throws(MediaError) -> EncodedFrame? {
        guard frame.width > 0, frame.height > 0 else {
            throw .invalidArgument("cannot encode an empty \(frame.width)x\(frame.height) picture")
        }
        guard frame.picture.colorSpace == .bt601Limited else {
            throw .wrongColorSpace(operation: "VP8 encoding", expected: .bt601Limited, got: frame.picture.colorSpace)
        }
        if frame.width != settings.width || frame.height != settings.height {
            try resize(width: frame.width, height: frame.height, bitrateKbps: settings.bitrateKbps)
        }
        try applyQuantizers(ceiling: quantizerCeiling, allowDrop: allowDrop)

        // pts: capture microseconds since the first frame, strictly increasing.
        let first = firstCapture ?? frame.captureTimestampMicros
        firstCapture = first
        var pts = Int64(clamping: frame.captureTimestampMicros &- min(first, frame.captureTimestampMicros))
        if lastPts >= 0, pts < lastPts + Self.minimumFrameSpacingMicros { pts = lastPts + Self.minimumFrameSpacingMicros }
        lastPts = pts

        var flags: vpx_enc_frame_flags_t = forceKeyframe ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : 0
        // A new context starts with a keyframe, which is always a reference frame.
        let nonReference = !updatesReferences && !forceKeyframe && framesSinceOpen > 0
        if nonReference {
            if !isErrorResilient { try setErrorResilient(true) }
            flags |= Self.nonReferenceFlags
        }
        let picture = frame.picture
        let status = picture.withUnsafePlanes { y, u, v in
            _ = vpx_img_wrap(image, VPX_IMG_FMT_I420, UInt32(picture.width), UInt32(picture.height), 1,
                             UnsafeMutablePointer(mutating: y.baseAddress))
            image.pointee.planes.0 = UnsafeMutablePointer(mutating: y.baseAddress)
            image.pointee.planes.1 = UnsafeMutablePointer(mutating: u.baseAddress)
            image.pointee.planes.2 = UnsafeMutablePointer(mutating: v.baseAddress)
            image.pointee.stride.0 = Int32(picture.yStride)
            image.pointee.stride.1 = Int32(picture.uvStride)
            image.pointee.stride.2 = Int32(picture.uvStride)
            return vpx_codec_encode(context, image, vpx_codec_pts_t(pts), UInt(Self.nominalFrameDurationMicros), flags, UInt(VPX_DL_REALTIME))
        }
        framesSubmitted += 1
        framesSinceOpen += 1
        guard status == VPX_CODEC_OK else { throw .vp8Encoder("encode: \(errorText())") }

        var bytes: [UInt8] = []
        var isKeyframe = false
        var libvpxDroppable = false
        var iterator: vpx_codec_iter_t?
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let data = packet.pointee.data.frame
            if let buffer = data.buf, data.sz > 0 {
                let packetBytes = UnsafeRawBufferPointer(start: buffer, count: Int(data.sz))
                // One packet per frame (no lag, one partition): a single allocation of the right size.
                if bytes.isEmpty { bytes = [UInt8](packetBytes) } else { bytes.append(contentsOf: packetBytes) }
            }
            if data.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0 { isKeyframe = true }
            if data.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_DROPPABLE) != 0 { libvpxDroppable = true }
        }
        guard !bytes.isEmpty else { return nil }
        var quantizer: Int32 = -1
        if cvpx_control_get_int(context, Int32(VP8E_GET_LAST_QUANTIZER_64.rawValue), &quantizer) != VPX_CODEC_OK {
            quantizer = -1
        }
        return EncodedFrame(
            bytes: bytes, isKeyframe: isKeyframe, captureTimestampMicros: frame.captureTimestampMicros,
            width: picture.width, height: picture.height, quantizer: Int(quantizer),
            isDroppable: nonReference && libvpxDroppable)
    }

    /// What makes a non-reference frame: no update of the last, golden and altref buffers, nor of the
    /// entropy context (libvpx `vp8cx.h`).
    private static let nonReferenceFlags = vpx_enc_frame_flags_t(
        VP8_EFLAG_NO_UPD_LAST | VP8_EFLAG_NO_UPD_GF | VP8_EFLAG_NO_UPD_ARF | VP8_EFLAG_NO_UPD_ENTROPY)

    /// Turns libvpx's error-resilient mode on or off at run time (`g_error_resilient`,
    /// `VPX_ERROR_RESILIENT_DEFAULT`, through `vpx_codec_enc_config_set`): on, the rate control refreshes no
    /// golden frame of its own and no frame carries probability updates to the next, so a frame encoded
    /// non-reference (`updatesReferences: false`) really is referenced by nothing. A non-reference frame
    /// turns it on by itself; turn it off when none will follow (it costs bytes).
    /// - Throws: `MediaError.vp8Encoder` if libvpx refuses (the mode stays as it was).
    public func setErrorResilient(_ on: Bool) throws(MediaError) {
        guard on != isErrorResilient else { return }
        if !isOpen { try open() }
        config.pointee.g_error_resilient = on ? vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT) : 0
        guard vpx_codec_enc_config_set(context, config) == VPX_CODEC_OK else {
            config.pointee.g_error_resilient = isErrorResilient ? vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT) : 0
            throw .vp8Encoder("config_set error-resilient \(on): \(errorText())")
        }
        isErrorResilient = on
    }

    /// Changes the CBR target at run time (`vpx_codec_enc_config_set`; nothing is re-created).
    /// - Throws: `MediaError.invalidArgument` outside 1…1 000 000 kbps, `.vp8Encoder` if libvpx refuses.
    public func setBitrate(kbps: Int) throws(MediaError) {
        guard kbps != settings.bitrateKbps else { return }
        var next = settings
        next.bitrateKbps = kbps
        try next.validate()
        config.pointee.rc_target_bitrate = UInt32(kbps)
        guard vpx_codec_enc_config_set(context, config) == VPX_CODEC_OK else {
            config.pointee.rc_target_bitrate = UInt32(settings.bitrateKbps)
            throw .vp8Encoder("config_set bitrate \(kbps): \(errorText())")
        }
        settings = next
    }

    /// Changes libvpx's rate-control knobs at run time (`vpx_codec_enc_config_set` and
    /// `VP8E_SET_MAX_INTRA_BITRATE_PCT`; nothing is re-created).
    /// - Throws: `MediaError.invalidArgument` for a value out of range, `.vp8Encoder` if libvpx refuses
    ///   (the previous knobs stay in force).
    public func setRateControl(_ rateControl: VP8RateControl) throws(MediaError) {
        guard rateControl != settings.rateControl else { return }
        try rateControl.validate()
        if !isOpen { try open() }
        Self.apply(rateControl, to: config)
        guard vpx_codec_enc_config_set(context, config) == VPX_CODEC_OK,
              cvpx_control_uint(context, Int32(VP8E_SET_MAX_INTRA_BITRATE_PCT.rawValue),
                                UInt32(rateControl.maxIntraBitratePercent)) == VPX_CODEC_OK else {
            let text = errorText()
            Self.apply(settings.rateControl, to: config)
            _ = vpx_codec_enc_config_set(context, config)
            throw .vp8Encoder("config_set rate control: \(text)")
        }
        settings.rateControl = rateControl
    }

    /// Changes the quantizer range at run time (`rc_min_quantizer`/`rc_max_quantizer`, applied with the
    /// next frame): a rate policy raises the floor as the target falls. Refinement ceilings are clamped to it.
    /// - Throws: `MediaError.invalidArgument` unless 0 <= min <= max <= 63.
    public func setQuantizerRange(min minimum: Int, max maximum: Int) throws(MediaError) {
        var next = settings
        next.minQuantizer = minimum
        next.maxQuantizer = maximum
        try next.validate()
        settings = next
    }

    private static func apply(_ rateControl: VP8RateControl, to cfg: UnsafeMutablePointer<vpx_codec_enc_cfg_t>) {
        cfg.pointee.rc_dropframe_thresh = UInt32(rateControl.dropFrameThreshold)
        cfg.pointee.rc_undershoot_pct = UInt32(rateControl.undershootPercent)
        cfg.pointee.rc_overshoot_pct = UInt32(rateControl.overshootPercent)
        cfg.pointee.rc_buf_sz = UInt32(rateControl.bufferMillis)
        cfg.pointee.rc_buf_initial_sz = UInt32(rateControl.initialBufferMillis)
        cfg.pointee.rc_buf_optimal_sz = UInt32(rateControl.optimalBufferMillis)
    }

    /// Re-creates the libvpx context for a new picture size (and bitrate); the next frame is a keyframe.
    /// The pts sequence continues.
    /// - Throws: `MediaError.invalidArgument` for a size or bitrate out of range, `.vp8Encoder` if libvpx
    ///   refuses (the encoder then keeps no context, and the next `encode` tries again).
    public func resize(width: Int, height: Int, bitrateKbps: Int) throws(MediaError) {
        var next = settings
        next.width = width
        next.height = height
        next.bitrateKbps = bitrateKbps
        try next.validate()
        close()
        settings = next
        try open()
    }

    // MARK: - libvpx context

    private func open() throws(MediaError) {
        guard cvpx_enc_config_default(config) == VPX_CODEC_OK else {
            throw .vp8Encoder("no default configuration")
        }
        let cfg = config
        cfg.pointee.g_w = UInt32(settings.width)
        cfg.pointee.g_h = UInt32(settings.height)
        cfg.pointee.g_threads = UInt32(settings.threads)
        cfg.pointee.g_timebase = vpx_rational(num: 1, den: 1_000_000)
        cfg.pointee.g_pass = VPX_RC_ONE_PASS
        cfg.pointee.g_lag_in_frames = 0
        cfg.pointee.g_error_resilient = isErrorResilient ? vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT) : 0
        cfg.pointee.rc_end_usage = VPX_CBR
        cfg.pointee.rc_target_bitrate = UInt32(settings.bitrateKbps)
        cfg.pointee.rc_min_quantizer = UInt32(settings.minQuantizer)
        cfg.pointee.rc_max_quantizer = UInt32(settings.maxQuantizer)
        cfg.pointee.rc_resize_allowed = 0
        Self.apply(settings.rateControl, to: cfg)
        cfg.pointee.kf_mode = VPX_KF_DISABLED
        appliedQuantizers = (settings.minQuantizer, settings.maxQuantizer)

        guard cvpx_enc_init(context, cfg, 0) == VPX_CODEC_OK else {
            let text = errorText()
            vpx_codec_destroy(context)
            throw .vp8Encoder("init \(settings.width)x\(settings.height): \(text)")
        }
        isOpen = true
        framesSinceOpen = 0
        let controls: [(String, Int32, Int32)] = [
            ("cpu-used", Int32(VP8E_SET_CPUUSED.rawValue), Int32(settings.cpuUsed)),
            ("screen-content-mode", Int32(VP8E_SET_SCREEN_CONTENT_MODE.rawValue), Int32(settings.screenContentMode)),
            ("static-threshold", Int32(VP8E_SET_STATIC_THRESHOLD.rawValue), Int32(settings.staticThreshold)),
            ("noise-sensitivity", Int32(VP8E_SET_NOISE_SENSITIVITY.rawValue), 0),
            ("token-partitions", Int32(VP8E_SET_TOKEN_PARTITIONS.rawValue), 0),
            ("max-intra-bitrate-pct", Int32(VP8E_SET_MAX_INTRA_BITRATE_PCT.rawValue), Int32(settings.rateControl.maxIntraBitratePercent)),
        ]
        for (name, id, value) in controls {
            guard cvpx_control_int(context, id, value) == VPX_CODEC_OK else {
                let text = errorText()
                close()
                throw .vp8Encoder("control \(name)=\(value): \(text)")
            }
        }
    }

    private func close() {
        guard isOpen else { return }
        vpx_codec_destroy(context)
        isOpen = false
    }

    /// Puts libvpx's quantizer range at the settings' (ceiling nil) or under `ceiling`, and its drop
    /// threshold at the settings' or 0 (`allowDrop` false), when they differ from what is configured.
    private func applyQuantizers(ceiling: Int?, allowDrop: Bool) throws(MediaError) {
        if !isOpen { try open() }
        var wanted = (min: settings.minQuantizer, max: settings.maxQuantizer)
        if let ceiling {
            wanted.max = max(settings.minQuantizer, min(settings.maxQuantizer, ceiling))
        }
        let dropThreshold = UInt32(allowDrop ? settings.rateControl.dropFrameThreshold : 0)
        guard wanted != appliedQuantizers || dropThreshold != config.pointee.rc_dropframe_thresh else { return }
        config.pointee.rc_min_quantizer = UInt32(wanted.min)
        config.pointee.rc_max_quantizer = UInt32(wanted.max)
        config.pointee.rc_dropframe_thresh = dropThreshold
        guard vpx_codec_enc_config_set(context, config) == VPX_CODEC_OK else {
            throw .vp8Encoder("config_set quantizers \(wanted.min)...\(wanted.max): \(errorText())")
        }
        appliedQuantizers = wanted
    }

    private func errorText() -> String {
        var text = vpx_codec_error(context).map { String(cString: $0) } ?? "unknown error"
        if let detail = vpx_codec_error_detail(context) { text += " (\(String(cString: detail)))" }
        return text
    }
}

/// An encoder holds a libvpx context: use it from one thread at a time.
@available(*, unavailable)
extension VP8Encoder: Sendable {}
