// libpipewire-0.3 (Debian libpipewire-0.3-dev 0.3.65) and SPA: the consumer of the portal's screen-cast stream.
// The pw_stream_* / pw_thread_loop_* calls import as they are; the spa_pod builder macros and variadic builders,
// the spa_buffer meta walk and the format parse are wrapped here as `static inline` functions named cpw_….
#ifndef SCREENCAST_CPIPEWIRE_SHIM_H
#define SCREENCAST_CPIPEWIRE_SHIM_H
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/param/param.h>
#include <spa/buffer/meta.h>
#include <spa/pod/builder.h>
#include <spa/debug/types.h>

/// The largest number of damage rectangles asked for per buffer (SPA_META_VideoDamage).
#define CPW_MAX_DAMAGE 16

/// Fills `params` (room for 1) with the one format we take: raw video in BGRx or BGRA (the bytes our encoders
/// read; BGRA's alpha is ignored), any size, up to `max_fps`. No `modifier` property: that keeps dma-buf out, for
/// a producer offers dma-buf only for formats with modifiers (there is no GPU to import them here).
/// Returns the number of params written (1), or 0 when `buffer` is too small.
static inline int cpw_build_format_params(uint8_t *buffer, uint32_t size, const struct spa_pod **params, uint32_t max_fps) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle def_size = SPA_RECTANGLE(1280, 720), min_size = SPA_RECTANGLE(1, 1),
                         max_size = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction def_rate = SPA_FRACTION(max_fps, 1), min_rate = SPA_FRACTION(0, 1),
                        max_rate = SPA_FRACTION(max_fps, 1);
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(3, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&def_size, &min_size, &max_size),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&def_rate, &min_rate, &max_rate));
    return params[0] != NULL ? 1 : 0;
}

/// The largest cursor bitmap asked for with SPA_META_Cursor, pixels per side (4 bytes a pixel).
#define CPW_MAX_CURSOR_SIDE 256

/// The size of the SPA_META_Cursor region asked for: a spa_meta_cursor, then its spa_meta_bitmap, then the pixels
/// of a bitmap of up to CPW_MAX_CURSOR_SIDE² pixels at 4 bytes each (the layout producers write: GNOME's Mutter,
/// KDE's KWin).
#define CPW_CURSOR_META_SIZE(side) (sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + (side) * (side) * 4)

/// Fills `params` (room for 4) for a negotiated format: buffers in shared memory only (MemFd or MemPtr, never
/// DmaBuf), the header meta (flags, pts), up to CPW_MAX_DAMAGE damage rectangles and, when `with_cursor`, the
/// cursor meta (SPA_META_Cursor, CPW_CURSOR_META_SIZE(CPW_MAX_CURSOR_SIDE) bytes at most: the portal's cursor mode
/// METADATA). Returns the count.
static inline int cpw_build_buffer_params(uint8_t *buffer, uint32_t size, const struct spa_pod **params, int with_cursor) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    int n = 0;
    params[n] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
    if (params[n] != NULL) n++;
    params[n] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    if (params[n] != NULL) n++;
    params[n] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoDamage),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(sizeof(struct spa_meta_region) * CPW_MAX_DAMAGE,
                                                      sizeof(struct spa_meta_region) * 1,
                                                      sizeof(struct spa_meta_region) * CPW_MAX_DAMAGE));
    if (params[n] != NULL) n++;
    if (with_cursor) {
        params[n] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
            SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
            SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int((int)CPW_CURSOR_META_SIZE(64), (int)CPW_CURSOR_META_SIZE(1),
                                                          (int)CPW_CURSOR_META_SIZE(CPW_MAX_CURSOR_SIDE)));
        if (params[n] != NULL) n++;
    }
    return n;
}

/// Reads a negotiated SPA_PARAM_Format: 0 with the video format (SPA_VIDEO_FORMAT_*) and size, or -1 when it is
/// not raw video.
static inline int cpw_parse_video_format(const struct spa_pod *param, uint32_t *format, uint32_t *width, uint32_t *height) {
    uint32_t media_type = 0, media_subtype = 0;
    if (param == NULL || spa_format_parse(param, &media_type, &media_subtype) < 0) return -1;
    if (media_type != SPA_MEDIA_TYPE_video || media_subtype != SPA_MEDIA_SUBTYPE_raw) return -1;
    struct spa_video_info_raw info;
    spa_zero(info);
    if (spa_format_video_raw_parse(param, &info) < 0) return -1;
    *format = info.format;
    *width = info.size.width;
    *height = info.size.height;
    return 0;
}

/// The name of a video format (e.g. "BGRx"), for logs.
static inline const char *cpw_video_format_name(uint32_t format) {
    return spa_debug_type_find_short_name(spa_type_video_format, format);
}

/// The pixels of a dequeued buffer's first plane (mapped by PW_STREAM_FLAG_MAP_BUFFERS): the start (already
/// past the chunk's offset), its size in bytes and stride, and its data type (SPA_DATA_*). Returns -1 when the
/// buffer has no mapped data or is marked corrupted (chunk or header flag), else 0.
static inline int cpw_buffer_pixels(struct pw_buffer *buffer, const uint8_t **data, uint32_t *size, int32_t *stride, uint32_t *type) {
    struct spa_buffer *b = buffer->buffer;
    if (b->n_datas < 1 || b->datas[0].data == NULL || b->datas[0].chunk == NULL) return -1;
    struct spa_data *d = &b->datas[0];
    if (d->chunk->flags & SPA_CHUNK_FLAG_CORRUPTED) return -1;
    struct spa_meta_header *h = spa_buffer_find_meta_data(b, SPA_META_Header, sizeof(*h));
    if (h != NULL && (h->flags & SPA_META_HEADER_FLAG_CORRUPTED)) return -1;
    uint32_t offset = d->chunk->offset % (d->maxsize ? d->maxsize : 1);
    *data = (const uint8_t *)d->data + offset;
    *size = SPA_MIN(d->chunk->size, d->maxsize - offset);
    *stride = d->chunk->stride;
    *type = d->type;
    return 0;
}

/// The damage rectangles of a buffer (SPA_META_VideoDamage) as x, y, w, h quadruples into `xywh` (room for
/// `max` rectangles). Returns the count (0: the meta is there and lists nothing), or -1 when the buffer has no
/// damage meta (the producer does not say what changed).
static inline int cpw_buffer_damage(struct pw_buffer *buffer, int32_t *xywh, int max) {
    struct spa_meta *meta = spa_buffer_find_meta(buffer->buffer, SPA_META_VideoDamage);
    if (meta == NULL) return -1;
    int n = 0;
    struct spa_meta_region *r;
    spa_meta_for_each(r, meta) {
        if (!spa_meta_region_is_valid(r)) break;
        if (n >= max) return -1;  /* more than we can hold: treat as unknown (the whole frame) */
        xywh[4 * n + 0] = r->region.position.x;
        xywh[4 * n + 1] = r->region.position.y;
        xywh[4 * n + 2] = (int32_t)r->region.size.width;
        xywh[4 * n + 3] = (int32_t)r->region.size.height;
        n++;
    }
    return n;
}

/// The cursor meta region of a buffer (SPA_META_Cursor: a spa_meta_cursor, maybe followed by a spa_meta_bitmap
/// and its pixels), as the producer wrote it: its start and size in bytes (spa_buffer_find_meta_data with the
/// size of a spa_meta_cursor). Returns -1 when the buffer has none (or one too small for a spa_meta_cursor).
static inline int cpw_buffer_cursor(struct pw_buffer *buffer, const uint8_t **data, uint32_t *size) {
    struct spa_meta *meta = spa_buffer_find_meta(buffer->buffer, SPA_META_Cursor);
    if (meta == NULL || spa_buffer_find_meta_data(buffer->buffer, SPA_META_Cursor, sizeof(struct spa_meta_cursor)) == NULL) return -1;
    *data = (const uint8_t *)meta->data;
    *size = meta->size;
    return 0;
}

/// The core's `error` event (pw_core_events.error, PipeWire's core.h): `id` is PW_ID_CORE and `res` -EPIPE when
/// the connection to the daemon is gone (the daemon died or restarted).
typedef void (*cpw_core_error_cb)(void *data, uint32_t id, int seq, int res, const char *message);

/// pw_core_add_listener (a macro over the core's interface) with only the `error` event: `events` and `hook` must
/// live as long as the listener (removed with spa_hook_remove).
static inline void cpw_core_add_error_listener(struct pw_core *core, struct spa_hook *hook, struct pw_core_events *events,
                                               cpw_core_error_cb on_error, void *data) {
    spa_zero(*events);
    events->version = PW_VERSION_CORE_EVENTS;
    events->error = on_error;
    pw_core_add_listener(core, hook, events, data);
}

/// PW_ID_CORE (an enum constant in a macro-heavy header), for Swift.
static inline uint32_t cpw_id_core(void) { return PW_ID_CORE; }

#endif
