// libyuv (Debian libyuv-dev; it ships no pkg-config file, so the module map links "yuv" itself).
// Scale, rotate and convert: ARGBToI420, I420Rotate, I420Scale, I444ToI420, ….
#ifndef SCREENCAST_CYUV_SHIM_H
#define SCREENCAST_CYUV_SHIM_H
#include <libyuv.h>
#endif
