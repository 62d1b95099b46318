// libturbojpeg (Debian libturbojpeg0-dev, pkg-config libturbojpeg) for Swift.
// The TurboJPEG API has no function-like macros or variadic calls that we use, so this header
// only includes it; wrappers for any that become needed go here as `static inline` functions.
#ifndef SCREENCAST_CTURBOJPEG_SHIM_H
#define SCREENCAST_CTURBOJPEG_SHIM_H
#include <turbojpeg.h>
#endif
