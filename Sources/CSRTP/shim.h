// libsrtp2 (Debian libsrtp2-dev, pkg-config libsrtp2): SRTP/SRTCP protect and unprotect (RFC 3711, RFC 7714).
#ifndef SCREENCAST_CSRTP_SHIM_H
#define SCREENCAST_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#endif
