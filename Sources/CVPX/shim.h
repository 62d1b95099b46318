// libvpx (Debian libvpx-dev, pkg-config vpx). vpx_codec_enc_init / vpx_codec_dec_init are function-like
// macros and vpx_codec_control is variadic: wrap what Swift cannot call as `static inline` functions here,
// named cvpx_….
#ifndef SCREENCAST_CVPX_SHIM_H
#define SCREENCAST_CVPX_SHIM_H
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

/// `vpx_codec_enc_init` for VP8 (the macro passes VPX_ENCODER_ABI_VERSION).
static inline vpx_codec_err_t cvpx_enc_init(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg,
                                            vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, vpx_codec_vp8_cx(), cfg, flags);
}

/// The VP8 encoder's default configuration for `usage` (0).
static inline vpx_codec_err_t cvpx_enc_config_default(vpx_codec_enc_cfg_t *cfg) {
    return vpx_codec_enc_config_default(vpx_codec_vp8_cx(), cfg, 0);
}

/// `vpx_codec_dec_init` for VP8 (the macro passes VPX_DECODER_ABI_VERSION).
static inline vpx_codec_err_t cvpx_dec_init(vpx_codec_ctx_t *ctx, const vpx_codec_dec_cfg_t *cfg,
                                            vpx_codec_flags_t flags) {
    return vpx_codec_dec_init(ctx, vpx_codec_vp8_dx(), cfg, flags);
}

/// `vpx_codec_control` (variadic) for the controls that take an int (VP8E_SET_CPUUSED,
/// VP8E_SET_SCREEN_CONTENT_MODE, …).
static inline vpx_codec_err_t cvpx_control_int(vpx_codec_ctx_t *ctx, int id, int value) {
    return vpx_codec_control_(ctx, id, value);
}

/// `vpx_codec_control` for the controls that take an unsigned int (VP8E_SET_STATIC_THRESHOLD,
/// VP8E_SET_MAX_INTRA_BITRATE_PCT, …).
static inline vpx_codec_err_t cvpx_control_uint(vpx_codec_ctx_t *ctx, int id, unsigned int value) {
    return vpx_codec_control_(ctx, id, value);
}

/// `vpx_codec_control` for the controls that read an int into `out` (VP8E_GET_LAST_QUANTIZER_64, …).
static inline vpx_codec_err_t cvpx_control_get_int(vpx_codec_ctx_t *ctx, int id, int *out) {
    return vpx_codec_control_(ctx, id, out);
}
#endif
