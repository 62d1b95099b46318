// FFmpeg's log, caught: libavutil logs through a variadic callback (va_list), which Swift cannot implement, and
// keeps nothing; this keeps the last error-level line logged on each thread (the RTMP server's own words,
// such as "Server error: Already publishing") for the error that follows, and prints nothing.
#ifndef SCREENCAST_CAVLOG_H
#define SCREENCAST_CAVLOG_H
#include <stddef.h>

/// Routes FFmpeg's log here (process-wide; idempotent).
void cavlog_capture(void);

/// Copies this thread's last FFmpeg error line into `out` (empty when none) and clears it.
void cavlog_take_error(char *out, size_t size);

#endif
