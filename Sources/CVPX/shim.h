// libvpx (Debian libvpx-dev, pkg-config vpx). vpx_codec_enc_init / vpx_codec_dec_init are function-like
// macros and vpx_codec_control is variadic: wrap what Swift cannot call as `static inline` functions here,
// named cvpx_….
#ifndef SCREENCAST_CVPX_SHIM_H
#define SCREENCAST_CVPX_SHIM_H
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#endif
