// OpenSSL 3 (Debian libssl-dev, pkg-config openssl): DTLS 1.2 over memory BIOs, certificates, digests.
// DTLSv1_get_timeout, DTLSv1_handle_timeout, SSL_CTX_set_mode, BIO_set_mem_eof_return, SSL_set_mtu, … are
// function-like macros: wrap each as a `static inline` function here, named copenssl_….
#ifndef SCREENCAST_COPENSSL_SHIM_H
#define SCREENCAST_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/rand.h>
#endif
