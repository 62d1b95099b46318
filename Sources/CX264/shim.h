// libx264 (Debian libx264-dev, pkg-config x264; GPL-2+). x264_encoder_open is a macro naming the ABI-versioned
// symbol (x264_encoder_open_164): wrap it as a `static inline` function here, named cx264_….
#ifndef SCREENCAST_CX264_SHIM_H
#define SCREENCAST_CX264_SHIM_H
#include <stdint.h>
#include <x264.h>

/// `x264_encoder_open` (a macro over `x264_encoder_open_<X264_BUILD>`).
static inline x264_t *cx264_encoder_open(x264_param_t *param) { return x264_encoder_open(param); }

#endif
