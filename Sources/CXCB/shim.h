// libxcb with the MIT-SHM, XFIXES, DAMAGE and RANDR extensions (Debian libxcb1-dev, libxcb-shm0-dev,
// libxcb-xfixes0-dev, libxcb-damage0-dev, libxcb-randr0-dev; pkg-config xcb, xcb-shm, …).
#ifndef SCREENCAST_CXCB_SHIM_H
#define SCREENCAST_CXCB_SHIM_H
#include <xcb/xcb.h>
#include <xcb/shm.h>
#include <xcb/xfixes.h>
#include <xcb/damage.h>
#include <xcb/randr.h>
#endif
