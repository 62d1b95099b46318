#include "cavlog.h"
#include <libavutil/log.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char last_error[512];

static void callback(void *avcl, int level, const char *fmt, va_list vl) {
    (void)avcl;
    if (level > AV_LOG_ERROR) return;
    char line[512];
    vsnprintf(line, sizeof line, fmt, vl);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    if (n > 0) memcpy(last_error, line, n + 1);
}

void cavlog_capture(void) { av_log_set_callback(callback); }

void cavlog_take_error(char *out, size_t size) {
    snprintf(out, size, "%s", last_error);
    last_error[0] = 0;
}
