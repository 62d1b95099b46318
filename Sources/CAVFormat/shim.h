// libavformat (Debian libavformat-dev: FFmpeg 5.1; Debian builds it GPL-2+): the flv and mp4 muxers and the
// rtmp/rtmps protocols. The interrupt callback is a C function pointer and an opaque pointer, set here. FFmpeg's
// log (variadic, va_list) is caught by the small C target CAVLog.
#ifndef SCREENCAST_CAVFORMAT_SHIM_H
#define SCREENCAST_CAVFORMAT_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
/// Points `ctx`'s interrupt callback (consulted by blocking protocol calls: connect, read, write) at
/// `callback(opaque)`; nonzero from it makes the call return AVERROR_EXIT.
static inline void cavformat_set_interrupt(AVFormatContext *ctx, int (*callback)(void *), void *opaque) {
    ctx->interrupt_callback.callback = callback;
    ctx->interrupt_callback.opaque = opaque;
}

#endif
