// libmicrohttpd (Debian libmicrohttpd-dev, pkg-config libmicrohttpd). MHD_start_daemon and
// MHD_get_daemon_info are variadic and MHD's logger takes a va_list: Swift can call none of them, so this
// header wraps them as `static inline` functions named cmhd_….
#ifndef SCREENCAST_CMICROHTTPD_SHIM_H
#define SCREENCAST_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>

/// Receives one formatted MHD log message (NUL-terminated, may end in '\n'), with the context given in
/// `struct cmhd_logger`.
typedef void (*cmhd_log_sink)(void *context, const char *message);

/// A log sink and its context. The caller keeps it alive (and at a fixed address) while the daemon runs.
struct cmhd_logger {
    cmhd_log_sink sink;
    void *context;
};

/// MHD_LogCallback → cmhd_log_sink: formats the printf-style message (truncated to 511 bytes).
static inline void cmhd_log_trampoline(void *cls, const char *format, va_list arguments) {
    struct cmhd_logger *logger = (struct cmhd_logger *)cls;
    if (logger == NULL || logger->sink == NULL) return;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    logger->sink(logger->context, message);
}

/// MHD_start_daemon with the fixed option set the Swift side uses (passed through MHD_OPTION_ARRAY):
/// - `address` (sockaddr_in or sockaddr_in6, matching MHD_USE_IPv6 in `flags`, with `port` in it) is the one
///   address bound;
/// - `completed`/`completed_cls` → MHD_OPTION_NOTIFY_COMPLETED;
/// - `logger` (may be NULL) → MHD_OPTION_EXTERNAL_LOGGER, given first so start-up messages use it too;
/// - `connection_limit` → MHD_OPTION_CONNECTION_LIMIT, `connection_timeout` (seconds idle) →
///   MHD_OPTION_CONNECTION_TIMEOUT, `memory_limit` (bytes per connection for headers and buffers) →
///   MHD_OPTION_CONNECTION_MEMORY_LIMIT (0 keeps MHD's default of 32 KiB); `per_ip_connection_limit` (0: none)
///   → MHD_OPTION_PER_IP_CONNECTION_LIMIT;
/// - MHD_OPTION_STRICT_FOR_CLIENT 1, always: an HTTP/1.1 request without `Host` (RFC 9112 §3.2: "A server MUST
///   respond with a 400") and a request line with a space inside its target are refused with 400;
/// - `notify`/`notify_cls` (may be NULL) → MHD_OPTION_NOTIFY_CONNECTION: told when a connection starts and when
///   it closes (MHD calls it before it closes the socket, daemon.c of 0.9.75);
/// - `https_key`/`https_cert` (PEM, NUL-terminated; both NULL for plain HTTP) → MHD_OPTION_HTTPS_MEM_KEY and
///   MHD_OPTION_HTTPS_MEM_CERT; `flags` must then hold MHD_USE_TLS. The caller keeps both alive while the
///   daemon runs.
/// Returns NULL when the daemon cannot start (bind failure, bad flags); the logger hears why.
static inline struct MHD_Daemon *cmhd_start_daemon(
    unsigned int flags, const struct sockaddr *address, uint16_t port,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    struct cmhd_logger *logger,
    unsigned int connection_limit, unsigned int connection_timeout, size_t memory_limit,
    unsigned int per_ip_connection_limit, MHD_NotifyConnectionCallback notify, void *notify_cls,
    const char *https_key, const char *https_cert)
{
    struct MHD_OptionItem options[13];
    int n = 0;
    if (logger != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)cmhd_log_trampoline, logger };
    }
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)address };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)connection_timeout, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL };
    if (memory_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)memory_limit, NULL };
    }
    if (per_ip_connection_limit > 0) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)per_ip_connection_limit, NULL };
    }
    if (notify != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, notify_cls };
    }
    if (https_key != NULL && https_cert != NULL) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)https_key };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)https_cert };
    }
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    // `port` only names the port in MHD's messages: the socket is bound to `address` (which carries it too).
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// The port the daemon's listening socket is bound to (the real one when port 0 was asked for); 0 if unknown.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// An IPv4 or IPv6 socket address's IP as text (dotted, or IPv6 without brackets; no port) into `text`
/// (`size` ≥ 46 bytes, INET6_ADDRSTRLEN); 0 on success, -1 for another family (inet_ntop(3)).
static inline int cmhd_address_text(const struct sockaddr *address, char *text, size_t size) {
    if (address == NULL || (address->sa_family != AF_INET && address->sa_family != AF_INET6)) return -1;
    const void *raw = address->sa_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)address)->sin6_addr
        : (const void *)&((const struct sockaddr_in *)address)->sin_addr;
    return inet_ntop(address->sa_family, raw, text, (socklen_t)size) == NULL ? -1 : 0;
}

/// The client's address of a connection as text (``cmhd_address_text``); -1 when the daemon does not know it
/// (MHD_get_connection_info, MHD_CONNECTION_INFO_CLIENT_ADDRESS).
static inline int cmhd_client_address(struct MHD_Connection *connection, char *text, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? -1 : cmhd_address_text(info->client_addr, text, size);
}

/// A connection's socket (MHD_get_connection_info, MHD_CONNECTION_INFO_CONNECTION_FD), or -1.
static inline int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

/// The daemon's listening socket, or -1.
static inline int cmhd_listen_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info == NULL ? -1 : (int)info->listen_fd;
}

/// A response that copies `size` bytes from `data` (which may be NULL when `size` is 0).
static inline struct MHD_Response *cmhd_response_copying(const void *data, size_t size) {
    static const char empty = 0;
    return MHD_create_response_from_buffer(size, (void *)(size == 0 ? &empty : data), MHD_RESPMEM_MUST_COPY);
}

#endif
