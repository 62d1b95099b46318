// usrsctp (Debian libusrsctp-dev 0.9.5, pkg-config usrsctp): a userland SCTP stack (RFC 9260) used in
// "conn" mode (AF_CONN): usrsctp hands every packet to our output callback and takes the peer's packets from
// usrsctp_conninput, so SCTP runs over our DTLS (RFC 8261). These wrappers keep the sockaddr_conn, setsockopt
// and sendv/recvv structures (and their flexible array members) out of Swift.
#ifndef SCREENCAST_CUSRSCTP_SHIM_H
#define SCREENCAST_CUSRSCTP_SHIM_H
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <usrsctp.h>

/// A sockaddr_conn for `addr` (the association's registered address) and `port` (host order).
static inline struct sockaddr_conn cusrsctp_conn_address(void *addr, uint16_t port) {
    struct sockaddr_conn sconn;
    memset(&sconn, 0, sizeof sconn);
    sconn.sconn_family = AF_CONN;
    sconn.sconn_port = htons(port);
    sconn.sconn_addr = addr;
    return sconn;
}

/// usrsctp_bind to (addr, port); 0 or -1 with errno.
static inline int cusrsctp_bind(struct socket *sock, void *addr, uint16_t port) {
    struct sockaddr_conn sconn = cusrsctp_conn_address(addr, port);
    return usrsctp_bind(sock, (struct sockaddr *)&sconn, sizeof sconn);
}

/// usrsctp_connect to (addr, port): the INIT goes out (non-blocking: EINPROGRESS is success, returns 0).
static inline int cusrsctp_connect(struct socket *sock, void *addr, uint16_t port) {
    struct sockaddr_conn sconn = cusrsctp_conn_address(addr, port);
    int result = usrsctp_connect(sock, (struct sockaddr *)&sconn, sizeof sconn);
    if (result < 0 && errno == EINPROGRESS) return 0;
    return result;
}

/// The WebRTC socket options (RFC 8831 §6.2): no Nagle (SCTP_NODELAY), abort on close (SO_LINGER 0), each
/// message's stream and PPID reported (SCTP_RECVRCVINFO), stream
/// resets allowed (RFC 6525, to close channels, RFC 8831 §6.7), the notifications the owner reads, `streams`
/// streams each way, the path MTU fixed at `mtu` (no PMTU discovery over DTLS), the partial delivery point.
/// Returns 0, or the (negative) step that failed.
static inline int cusrsctp_configure(struct socket *sock, uint16_t streams, uint32_t mtu, uint32_t partial_point) {
    struct linger linger = { .l_onoff = 1, .l_linger = 0 };
    if (usrsctp_setsockopt(sock, SOL_SOCKET, SO_LINGER, &linger, sizeof linger) < 0) return -1;
    int on = 1;
    if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof on) < 0) return -2;
    // usrsctp_recvv reports each message's stream and PPID (struct sctp_rcvinfo) only when asked.
    if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof on) < 0) return -9;
    struct sctp_assoc_value reset = { .assoc_id = SCTP_ALL_ASSOC, .assoc_value = SCTP_ENABLE_RESET_STREAM_REQ };
    if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_ENABLE_STREAM_RESET, &reset, sizeof reset) < 0) return -3;
    const uint16_t events[] = { SCTP_ASSOC_CHANGE, SCTP_STREAM_RESET_EVENT, SCTP_SEND_FAILED_EVENT, SCTP_REMOTE_ERROR };
    for (unsigned i = 0; i < sizeof events / sizeof events[0]; i++) {
        struct sctp_event event = { .se_assoc_id = SCTP_ALL_ASSOC, .se_type = events[i], .se_on = 1 };
        if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_EVENT, &event, sizeof event) < 0) return -4;
    }
    struct sctp_initmsg init;
    memset(&init, 0, sizeof init);
    init.sinit_num_ostreams = streams;
    init.sinit_max_instreams = streams;
    if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof init) < 0) return -5;
    struct sctp_paddrparams params;
    memset(&params, 0, sizeof params);
    params.spp_assoc_id = SCTP_FUTURE_ASSOC;
    params.spp_pathmtu = mtu;
    params.spp_flags = SPP_PMTUD_DISABLE;
    if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &params, sizeof params) < 0) return -6;
    if (usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_PARTIAL_DELIVERY_POINT, &partial_point, sizeof partial_point) < 0) return -7;
    if (usrsctp_set_non_blocking(sock, 1) < 0) return -8;
    return 0;
}

/// Sends one message (or its whole remainder) on stream `sid` with payload protocol `ppid` (host order):
/// ordered or not, with partial reliability `pr_policy` (SCTP_PR_SCTP_NONE/RTX/TTL) and its value.
/// Returns the bytes taken, or -1 with errno (EWOULDBLOCK: the send buffer is full).
static inline ssize_t cusrsctp_send(struct socket *sock, uint16_t sid, uint32_t ppid, int unordered,
                                    uint16_t pr_policy, uint32_t pr_value, const void *data, size_t length) {
    struct sctp_sendv_spa spa;
    memset(&spa, 0, sizeof spa);
    spa.sendv_flags = SCTP_SEND_SNDINFO_VALID;
    spa.sendv_sndinfo.snd_sid = sid;
    spa.sendv_sndinfo.snd_ppid = htonl(ppid);
    spa.sendv_sndinfo.snd_flags = SCTP_EOR | (unordered ? SCTP_UNORDERED : 0);
    if (pr_policy != SCTP_PR_SCTP_NONE) {
        spa.sendv_flags |= SCTP_SEND_PRINFO_VALID;
        spa.sendv_prinfo.pr_policy = pr_policy;
        spa.sendv_prinfo.pr_value = pr_value;
    }
    // usrsctp takes a zero-length message as nothing to send; callers never pass one (RFC 8831 §6.6: PPIDs 56/57).
    return usrsctp_sendv(sock, data, length, NULL, 0, &spa, (socklen_t)sizeof spa, SCTP_SENDV_SPA, 0);
}

/// What one usrsctp_recvv gave: a (part of a) message or a notification.
struct cusrsctp_received {
    ssize_t length;      ///< bytes written, or -1 (errno: EWOULDBLOCK when nothing waits)
    int flags;           ///< MSG_NOTIFICATION, MSG_EOR
    uint16_t sid;        ///< stream id (messages)
    uint32_t ppid;       ///< payload protocol id, host order (messages)
};

static inline struct cusrsctp_received cusrsctp_receive(struct socket *sock, void *buffer, size_t capacity) {
    struct cusrsctp_received out;
    memset(&out, 0, sizeof out);
    struct sctp_rcvinfo info;
    memset(&info, 0, sizeof info);
    socklen_t info_length = sizeof info;
    unsigned int info_type = 0;
    struct sockaddr_conn from;
    socklen_t from_length = sizeof from;
    int flags = 0;
    out.length = usrsctp_recvv(sock, buffer, capacity, (struct sockaddr *)&from, &from_length, &info, &info_length,
                               &info_type, &flags);
    out.flags = flags;
    if (out.length >= 0 && info_type == SCTP_RECVV_RCVINFO) {
        out.sid = info.rcv_sid;
        out.ppid = ntohl(info.rcv_ppid);
    }
    return out;
}

/// A notification read into the owner's buffer, its fields that matter to data channels.
struct cusrsctp_notification {
    uint16_t type;        ///< SCTP_ASSOC_CHANGE, SCTP_STREAM_RESET_EVENT, … (0: too short to read)
    uint16_t flags;       ///< strreset_flags for a stream reset
    uint16_t state;       ///< sac_state for an association change (SCTP_COMM_UP, SCTP_COMM_LOST, …)
    uint16_t error;       ///< sac_error
    uint32_t stream_count;///< streams listed in a stream reset event
};

static inline struct cusrsctp_notification cusrsctp_read_notification(const void *buffer, size_t length) {
    struct cusrsctp_notification out;
    memset(&out, 0, sizeof out);
    const union sctp_notification *n = (const union sctp_notification *)buffer;
    if (length < sizeof n->sn_header) return out;
    out.type = n->sn_header.sn_type;
    if (out.type == SCTP_ASSOC_CHANGE && length >= sizeof(struct sctp_assoc_change)) {
        out.state = n->sn_assoc_change.sac_state;
        out.error = n->sn_assoc_change.sac_error;
    } else if (out.type == SCTP_STREAM_RESET_EVENT && length >= sizeof(struct sctp_stream_reset_event)) {
        out.flags = n->sn_strreset_event.strreset_flags;
        out.stream_count = (uint32_t)((length - sizeof(struct sctp_stream_reset_event)) / sizeof(uint16_t));
    }
    return out;
}

/// Stream `index` of a stream reset event read by cusrsctp_read_notification (index < stream_count).
static inline uint16_t cusrsctp_reset_stream_at(const void *buffer, uint32_t index) {
    const struct sctp_stream_reset_event *event = (const struct sctp_stream_reset_event *)buffer;
    return event->strreset_stream_list[index];
}

/// Resets our outgoing stream `sid` (RFC 6525 §5.1.2; closes a data channel, RFC 8831 §6.7). 0 or -1/errno.
static inline int cusrsctp_reset_outgoing(struct socket *sock, uint16_t sid) {
    char storage[sizeof(struct sctp_reset_streams) + sizeof(uint16_t)];
    struct sctp_reset_streams *reset = (struct sctp_reset_streams *)storage;
    memset(storage, 0, sizeof storage);
    reset->srs_assoc_id = SCTP_ALL_ASSOC;
    reset->srs_flags = SCTP_STREAM_RESET_OUTGOING;
    reset->srs_number_streams = 1;
    reset->srs_stream_list[0] = sid;
    return usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_RESET_STREAMS, reset, (socklen_t)sizeof storage);
}

/// The sysctls a WebRTC endpoint sets once per process: no ECN (RFC 8261 §5 leaves it to the lower layer),
/// the send and receive buffers (bytes).
static inline void cusrsctp_tune(uint32_t buffer_bytes) {
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    usrsctp_sysctl_set_sctp_sendspace(buffer_bytes);
    usrsctp_sysctl_set_sctp_recvspace(buffer_bytes);
}

static inline int cusrsctp_errno(void) { return errno; }
#endif
