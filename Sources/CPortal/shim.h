// libportal (Debian libportal-dev 0.6, GLib/GIO): the xdg-desktop-portal ScreenCast session
// (CreateSession → SelectSources → Start → OpenPipeWireRemote) and a little GDBus to tell a missing portal
// from a refusing one. g_signal_connect is a macro and g_variant_new / g_variant_get are variadic: what Swift
// cannot call is wrapped here as `static inline` functions named cportal_….
#ifndef SCREENCAST_CPORTAL_SHIM_H
#define SCREENCAST_CPORTAL_SHIM_H
#include <libportal/portal.h>
#include <gio/gio.h>
#include <glib.h>
#include <glib-object.h>

/// XdpSession's "closed" signal: the portal's Session::Closed (the desktop's "stop sharing").
typedef void (*cportal_closed_cb)(XdpSession *session, gpointer user_data);

static inline gulong cportal_connect_closed(XdpSession *session, cportal_closed_cb cb, gpointer data) {
    return g_signal_connect(session, "closed", G_CALLBACK(cb), data);
}

static inline void cportal_disconnect(gpointer instance, gulong handler) { g_signal_handler_disconnect(instance, handler); }

static inline void cportal_unref(gpointer object) { g_object_unref(object); }

/// Copies a GError's message into `reason` (NUL-terminated, at most `size` bytes), returns its code and frees it.
static inline gint cportal_take_error(GError *error, char *reason, gsize size) {
    if (error == NULL) return 0;
    gint code = error->code;
    if (reason != NULL && size > 0) g_strlcpy(reason, error->message, size);
    g_error_free(error);
    return code;
}

/// True when `error` says no process owns the bus name (and none could be started for it).
static inline gboolean cportal_error_is_service_unknown(const GError *error) {
    if (error == NULL) return FALSE;
    if (g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN)) return TRUE;
    if (g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER)) return TRUE;
    if (g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND)) return TRUE;
    gchar *remote = g_dbus_error_get_remote_error(error);
    gboolean unknown = remote != NULL && (g_str_equal(remote, "org.freedesktop.DBus.Error.ServiceUnknown")
                                          || g_str_has_prefix(remote, "org.freedesktop.DBus.Error.Spawn"));
    g_free(remote);
    return unknown;
}

/// The ScreenCast portal's `version` property (org.freedesktop.DBus.Properties.Get with a timeout), which also
/// starts xdg-desktop-portal by bus activation. Returns the version (≥ 1), or 0 with `*error` set:
/// *kind is 1 when the portal itself is missing (no owner, no service file), 2 when it answers but has no
/// ScreenCast interface (no backend that implements it), 3 for anything else (no bus, a timeout, …).
static inline guint cportal_screencast_version(GDBusConnection *bus, gint timeout_ms, gint *kind, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(
        bus, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.DBus.Properties",
        "Get", g_variant_new("(ss)", "org.freedesktop.portal.ScreenCast", "version"), G_VARIANT_TYPE("(v)"),
        G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
    if (reply == NULL) {
        if (cportal_error_is_service_unknown(*error)) *kind = 1;
        else if (g_error_matches(*error, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS)
                 || g_error_matches(*error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_INTERFACE)
                 || g_error_matches(*error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY)
                 || g_error_matches(*error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD)
                 || g_error_matches(*error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT)) *kind = 2;
        else *kind = 3;
        return 0;
    }
    GVariant *boxed = NULL;
    g_variant_get(reply, "(v)", &boxed);
    guint version = g_variant_is_of_type(boxed, G_VARIANT_TYPE_UINT32) ? g_variant_get_uint32(boxed) : 0;
    g_variant_unref(boxed);
    g_variant_unref(reply);
    if (version == 0) {
        *kind = 2;
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "the ScreenCast portal reports no version");
    }
    return version;
}

/// A `u` property of the ScreenCast portal (`AvailableSourceTypes`: 1 monitor, 2 window, 4 virtual;
/// `AvailableCursorModes`: 1 hidden, 2 embedded, 4 metadata), read with org.freedesktop.DBus.Properties.Get.
/// Returns the value, or 0 with `*error` set when it cannot be read.
static inline guint cportal_screencast_uint_property(GDBusConnection *bus, const char *name, gint timeout_ms, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(
        bus, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop", "org.freedesktop.DBus.Properties",
        "Get", g_variant_new("(ss)", "org.freedesktop.portal.ScreenCast", name), G_VARIANT_TYPE("(v)"),
        G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, error);
    if (reply == NULL) return 0;
    GVariant *boxed = NULL;
    g_variant_get(reply, "(v)", &boxed);
    guint value = g_variant_is_of_type(boxed, G_VARIANT_TYPE_UINT32) ? g_variant_get_uint32(boxed) : 0;
    g_variant_unref(boxed);
    g_variant_unref(reply);
    return value;
}

/// The first stream of a started session (xdp_session_get_streams: `a(ua{sv})`): its PipeWire node id, and its
/// size when the portal says it (else 0). Returns FALSE when there is none.
static inline gboolean cportal_first_stream(XdpSession *session, guint32 *node, gint32 *width, gint32 *height) {
    GVariant *streams = xdp_session_get_streams(session);
    if (streams == NULL || g_variant_n_children(streams) == 0) return FALSE;
    GVariant *props = NULL;
    g_variant_get_child(streams, 0, "(u@a{sv})", node, &props);
    *width = 0;
    *height = 0;
    if (props != NULL) {
        g_variant_lookup(props, "size", "(ii)", width, height);
        g_variant_unref(props);
    }
    return TRUE;
}

#endif
