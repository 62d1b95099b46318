// libavcodec and libavutil (Debian libavcodec-dev, libavutil-dev: FFmpeg 5.1; Debian builds them GPL-2+): the
// packet and codec-parameter types the muxers take. AVERROR is a macro: wrapped as cavcodec_….
#ifndef SCREENCAST_CAVCODEC_SHIM_H
#define SCREENCAST_CAVCODEC_SHIM_H
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/dict.h>
#include <libavutil/mem.h>
#include <libavutil/channel_layout.h>
#include <libavutil/frame.h>

/// `AVERROR(e)` for a positive errno value.
static inline int cavcodec_averror(int e) { return AVERROR(e); }
/// `AVERROR_EOF`.
static inline int cavcodec_averror_eof(void) { return AVERROR_EOF; }
/// `AVERROR_EXIT` (what an interrupt callback makes a blocking call return).
static inline int cavcodec_averror_exit(void) { return AVERROR_EXIT; }

/// `AVERROR(EAGAIN)`: an encoder or decoder wants more input (or its output read) first.
static inline int cavcodec_averror_eagain(void) { return AVERROR(EAGAIN); }
/// Sets the default layout of `channels` channels (FFmpeg 5.1's AVChannelLayout, a struct with a union).
static inline int cavcodec_set_channels(AVChannelLayout *layout, int channels) {
    av_channel_layout_uninit(layout);
    av_channel_layout_default(layout, channels);
    return layout->nb_channels;
}

#endif
