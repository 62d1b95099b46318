// CPulse: libpulse's blocking "simple" API (Debian libpulse-dev 16.1), for the agent's sound capture.
// libpulse-simple.pc carries -pthread, which SwiftPM refuses with a warning, so the module map links the two
// libraries by name and no pkg-config is used (the headers are in /usr/include/pulse).
#ifndef SCREENCAST_CPULSE_SHIM_H
#define SCREENCAST_CPULSE_SHIM_H

#include <pulse/simple.h>
#include <pulse/error.h>
#include <pulse/sample.h>
#include <stdint.h>

// Opens a record stream of s16le at `rate` Hz with `channels` channels from `device` (NULL: the default
// source; "@DEFAULT_MONITOR@": the monitor of the default sink). `fragment_bytes` asks the server for
// fragments of that size (pa_buffer_attr.fragsize), which with PA_STREAM_ADJUST_LATENCY (pa_simple sets it)
// also bounds the source's latency. On failure returns NULL and sets *error (a PA_ERR_* code).
static inline pa_simple *cpulse_open_record(const char *server, const char *client_name, const char *stream_name,
                                            const char *device, uint32_t rate, uint8_t channels,
                                            uint32_t fragment_bytes, int *error) {
    pa_sample_spec spec;
    spec.format = PA_SAMPLE_S16LE;
    spec.rate = rate;
    spec.channels = channels;
    pa_buffer_attr attr;
    attr.maxlength = (uint32_t)-1;
    attr.tlength = (uint32_t)-1;
    attr.prebuf = (uint32_t)-1;
    attr.minreq = (uint32_t)-1;
    attr.fragsize = fragment_bytes;
    return pa_simple_new(server, client_name, PA_STREAM_RECORD, device, stream_name, &spec, NULL, &attr, error);
}

// Blocks until `bytes` bytes are read. 0 on success, else -1 with *error set.
static inline int cpulse_read(pa_simple *stream, void *data, size_t bytes, int *error) {
    return pa_simple_read(stream, data, bytes, error);
}

// The stream's latency in µs (pa_stream_get_latency through pa_simple): how long ago the next sample to be
// read was recorded. (pa_usec_t)-1 with *error set on failure.
static inline uint64_t cpulse_latency_usec(pa_simple *stream, int *error) {
    return (uint64_t)pa_simple_get_latency(stream, error);
}

static inline void cpulse_free(pa_simple *stream) { pa_simple_free(stream); }

static inline const char *cpulse_strerror(int error) { return pa_strerror(error); }

static inline int cpulse_error_no_entity(void) { return PA_ERR_NOENTITY; }
static inline int cpulse_error_connection_refused(void) { return PA_ERR_CONNECTIONREFUSED; }

#endif
