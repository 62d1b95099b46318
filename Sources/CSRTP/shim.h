// libsrtp2 (Debian libsrtp2-dev, pkg-config libsrtp2): SRTP/SRTCP protect and unprotect (RFC 3711, RFC 7714).
#ifndef SCREENCAST_CSRTP_SHIM_H
#define SCREENCAST_CSRTP_SHIM_H
#include <srtp2/srtp.h>

/// The `ssrc_any_outbound` / `ssrc_any_inbound` wildcards of srtp_ssrc_type_t, for a policy that keys every
/// stream of one direction (key sharing, RFC 3711 §3.2.3 as used by DTLS-SRTP, RFC 5764 §4.1.2).
static inline void csrtp_policy_set_any_ssrc(srtp_policy_t *policy, int inbound) {
    policy->ssrc.type = inbound ? ssrc_any_inbound : ssrc_any_outbound;
    policy->ssrc.value = 0;
}
#endif
