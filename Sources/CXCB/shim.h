// libxcb with the MIT-SHM, XFIXES, DAMAGE, RANDR and Composite extensions (Debian libxcb1-dev, libxcb-shm0-dev,
// libxcb-xfixes0-dev, libxcb-damage0-dev, libxcb-randr0-dev, libxcb-composite0-dev; pkg-config xcb, xcb-shm, …).
#ifndef SCREENCAST_CXCB_SHIM_H
#define SCREENCAST_CXCB_SHIM_H
#include <xcb/xcb.h>
#include <xcb/shm.h>
#include <xcb/xfixes.h>
#include <xcb/damage.h>
#include <xcb/randr.h>
#include <xcb/composite.h>

// The extension ids (`xcb_shm_id`, …) are mutable C globals, which Swift 6 refuses to touch from
// concurrent code; these wrappers take their address in C. Each returns the cached QueryExtension
// reply (owned by the connection, never freed by the caller); NULL only on a broken connection.
static inline const xcb_query_extension_reply_t *cxcb_shm_extension(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_shm_id);
}
static inline const xcb_query_extension_reply_t *cxcb_damage_extension(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_damage_id);
}
static inline const xcb_query_extension_reply_t *cxcb_xfixes_extension(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_xfixes_id);
}
static inline const xcb_query_extension_reply_t *cxcb_randr_extension(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_randr_id);
}
static inline const xcb_query_extension_reply_t *cxcb_composite_extension(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_composite_id);
}

#endif
