// libcurl (Debian libcurl4-openssl-dev, pkg-config libcurl). curl_easy_setopt and curl_easy_getinfo are
// variadic: Swift cannot call them, so this header wraps each argument type as a `static inline`
// function named ccurl_….
#ifndef SCREENCAST_CCURL_SHIM_H
#define SCREENCAST_CCURL_SHIM_H
#include <stddef.h>
#include <curl/curl.h>

/// A write or header callback (CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION): returns the bytes taken.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// A string option; libcurl copies it (since 7.17.0) except CURLOPT_POSTFIELDS (use COPYPOSTFIELDS).
static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_callback(CURL *handle, CURLoption option, ccurl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

/// A progress callback (CURLOPT_XFERINFOFUNCTION): non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
typedef int (*ccurl_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode ccurl_setopt_xferinfo(CURL *handle, ccurl_xferinfo_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}

static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
