// libavformat (Debian libavformat-dev: FFmpeg 5.1; Debian builds it GPL-2+): the flv and mp4 muxers and the
// rtmp/rtmps protocols. The interrupt callback is a C function pointer and an opaque pointer, set here.
#ifndef SCREENCAST_CAVFORMAT_SHIM_H
#define SCREENCAST_CAVFORMAT_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/log.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/// The last error-level line libavformat logged on this thread (the RTMP server's own words, such as
/// "Server error: Already publishing"), kept instead of printed; read and cleared by cavformat_take_error.
static __thread char cavformat_last_error[512];

static void cavformat_log_callback(void *avcl, int level, const char *fmt, va_list vl) {
    (void)avcl;
    if (level > AV_LOG_ERROR) return;
    char line[512];
    vsnprintf(line, sizeof line, fmt, vl);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    if (n > 0) memcpy(cavformat_last_error, line, n + 1);
}

/// Routes FFmpeg's log into cavformat_last_error (error lines only; nothing reaches stderr).
static inline void cavformat_capture_log(void) { av_log_set_callback(cavformat_log_callback); }

/// Copies this thread's last FFmpeg error line into `out` (empty when none) and clears it.
static inline void cavformat_take_error(char *out, size_t size) {
    snprintf(out, size, "%s", cavformat_last_error);
    cavformat_last_error[0] = 0;
}

/// Points `ctx`'s interrupt callback (consulted by blocking protocol calls: connect, read, write) at
/// `callback(opaque)`; nonzero from it makes the call return AVERROR_EXIT.
static inline void cavformat_set_interrupt(AVFormatContext *ctx, int (*callback)(void *), void *opaque) {
    ctx->interrupt_callback.callback = callback;
    ctx->interrupt_callback.opaque = opaque;
}

#endif
