// OpenSSL 3 (Debian libssl-dev, pkg-config openssl): DTLS 1.2 over memory BIOs, certificates, digests.
// DTLSv1_get_timeout, DTLSv1_handle_timeout, SSL_CTX_set_mode, BIO_set_mem_eof_return, SSL_set_mtu, … are
// function-like macros: wrap each as a `static inline` function here, named copenssl_….
#ifndef SCREENCAST_COPENSSL_SHIM_H
#define SCREENCAST_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <sys/time.h>

// MARK: DTLS timers (RFC 6347 §4.2.4)

/// Microseconds until OpenSSL's retransmission timer expires (0 when it already has), or -1 when no
/// timer runs. Wraps the DTLSv1_get_timeout macro.
static inline long long copenssl_dtls_timeout_us(SSL *ssl) {
    struct timeval tv = {0, 0};
    if (DTLSv1_get_timeout(ssl, &tv) != 1) return -1;
    return (long long)tv.tv_sec * 1000000LL + (long long)tv.tv_usec;
}

/// 1 when a flight was retransmitted, 0 when the timer had not expired, -1 on failure (too many
/// retransmissions). Wraps the DTLSv1_handle_timeout macro.
static inline long copenssl_dtls_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }

// MARK: Connection options

static inline long copenssl_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
static inline int copenssl_ctx_set_dtls12_only(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) == 1
        && SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION) == 1;
}
/// SSL_OP_NO_QUERY_MTU (we set the MTU; a memory BIO cannot be asked), SSL_OP_NO_RENEGOTIATION,
/// SSL_OP_NO_TICKET: the constants are 64-bit shift expressions Swift does not import.
static inline void copenssl_ctx_set_webrtc_options(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_QUERY_MTU | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
}
static inline int copenssl_set_app_data(SSL *ssl, void *data) { return SSL_set_app_data(ssl, data); }
static inline void *copenssl_get_app_data(const SSL *ssl) { return SSL_get_app_data(ssl); }

// MARK: BIO method helpers (macros)

static inline void copenssl_bio_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }
static inline void copenssl_bio_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }

// MARK: Keys and certificates

/// A fresh ECDSA P-256 key (EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen).
static inline EVP_PKEY *copenssl_generate_p256_key(void) { return EVP_EC_gen("P-256"); }
static inline int copenssl_name_add_cn(X509_NAME *name, const char *cn) {
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
}
#endif
