// libnice (Debian libnice-dev, pkg-config nice) with GLib: ICE (RFC 8445). g_signal_connect is a macro and
// g_object_set is variadic: wrap what Swift cannot call as `static inline` functions here, named cnice_….
#ifndef SCREENCAST_CNICE_SHIM_H
#define SCREENCAST_CNICE_SHIM_H
#include <nice/agent.h>
#include <nice/interfaces.h>
#include <glib.h>
#include <glib-object.h>

// MARK: Signal handlers, one typed connect per signal (g_signal_connect is a macro taking an untyped GCallback).

/// "component-state-changed" (stream_id, component_id, NiceComponentState).
typedef void (*cnice_state_changed_cb)(NiceAgent *agent, guint stream_id, guint component_id, guint state,
                                       gpointer user_data);
/// "candidate-gathering-done" (stream_id).
typedef void (*cnice_gathering_done_cb)(NiceAgent *agent, guint stream_id, gpointer user_data);
/// "new-candidate-full" and "new-remote-candidate-full" (candidate, owned by the agent).
typedef void (*cnice_candidate_cb)(NiceAgent *agent, NiceCandidate *candidate, gpointer user_data);
/// "new-selected-pair-full" (stream_id, component_id, local, remote; owned by the agent).
typedef void (*cnice_selected_pair_cb)(NiceAgent *agent, guint stream_id, guint component_id, NiceCandidate *local,
                                       NiceCandidate *remote, gpointer user_data);

static inline gulong cnice_connect_state_changed(NiceAgent *agent, cnice_state_changed_cb cb, gpointer data) {
    return g_signal_connect(agent, "component-state-changed", G_CALLBACK(cb), data);
}

static inline gulong cnice_connect_gathering_done(NiceAgent *agent, cnice_gathering_done_cb cb, gpointer data) {
    return g_signal_connect(agent, "candidate-gathering-done", G_CALLBACK(cb), data);
}

static inline gulong cnice_connect_new_candidate(NiceAgent *agent, cnice_candidate_cb cb, gpointer data) {
    return g_signal_connect(agent, "new-candidate-full", G_CALLBACK(cb), data);
}

static inline gulong cnice_connect_new_remote_candidate(NiceAgent *agent, cnice_candidate_cb cb, gpointer data) {
    return g_signal_connect(agent, "new-remote-candidate-full", G_CALLBACK(cb), data);
}

static inline gulong cnice_connect_selected_pair(NiceAgent *agent, cnice_selected_pair_cb cb, gpointer data) {
    return g_signal_connect(agent, "new-selected-pair-full", G_CALLBACK(cb), data);
}

/// Disconnects every handler connected with `data` (g_signal_handlers_disconnect_by_data is a macro).
static inline guint cnice_disconnect_all(NiceAgent *agent, gpointer data) {
    return g_signal_handlers_disconnect_by_data(agent, data);
}

// MARK: Properties (g_object_set is variadic).

static inline void cnice_set_bool(NiceAgent *agent, const char *name, gboolean value) {
    g_object_set(G_OBJECT(agent), name, value, NULL);
}

static inline guint cnice_get_uint(NiceAgent *agent, const char *name) {
    guint value = 0;
    g_object_get(G_OBJECT(agent), name, &value, NULL);
    return value;
}

static inline void cnice_set_uint(NiceAgent *agent, const char *name, guint value) {
    g_object_set(G_OBJECT(agent), name, value, NULL);
}

static inline void cnice_set_string(NiceAgent *agent, const char *name, const char *value) {
    g_object_set(G_OBJECT(agent), name, value, NULL);
}

static inline gboolean cnice_get_bool(NiceAgent *agent, const char *name) {
    gboolean value = FALSE;
    g_object_get(G_OBJECT(agent), name, &value, NULL);
    return value;
}

static inline void cnice_unref(NiceAgent *agent) { g_object_unref(agent); }

// MARK: Sending with the reason of a failure.

/// One datagram through nice_agent_send_messages_nonblocking (what nice_agent_send does, with the GError kept):
/// returns `length` when it was sent, 0 when the socket would block, -1 on an error, whose message is then
/// copied to `reason` (at most `reason_size` bytes, NUL-terminated).
static inline gint cnice_send(NiceAgent *agent, guint stream_id, guint component_id, const void *bytes, gsize length,
                              char *reason, gsize reason_size) {
    GOutputVector vector = {bytes, length};
    NiceOutputMessage message = {&vector, 1};
    GError *error = NULL;
    gint sent = nice_agent_send_messages_nonblocking(agent, stream_id, component_id, &message, 1, NULL, &error);
    if (sent == 1) return (gint)length;
    if (error != NULL) {
        gint code = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) ? 0 : -1;
        if (reason != NULL && reason_size > 0) g_strlcpy(reason, error->message, reason_size);
        g_error_free(error);
        return code;
    }
    if (reason != NULL && reason_size > 0) g_strlcpy(reason, "nothing sent", reason_size);
    return 0;
}

#endif
