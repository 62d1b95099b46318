// libnice (Debian libnice-dev, pkg-config nice) with GLib: ICE (RFC 8445). g_signal_connect is a macro and
// g_object_set is variadic: wrap what Swift cannot call as `static inline` functions here, named cnice_….
#ifndef SCREENCAST_CNICE_SHIM_H
#define SCREENCAST_CNICE_SHIM_H
#include <nice/agent.h>
#include <glib.h>
#include <glib-object.h>
#endif
