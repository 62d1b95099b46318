// libmicrohttpd (Debian libmicrohttpd-dev, pkg-config libmicrohttpd). MHD_start_daemon is variadic: wrap it
// (or pass options with MHD_OPTION_ARRAY) as `static inline` functions here, named cmhd_….
#ifndef SCREENCAST_CMICROHTTPD_SHIM_H
#define SCREENCAST_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
#endif
