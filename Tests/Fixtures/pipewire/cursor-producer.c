/* A tiny PipeWire video producer with cursor metadata, for PipeWireCursorTests: what a GNOME or KDE portal's
 * stream carries in cursor mode METADATA (pw-cat and GStreamer's pipewiresink cannot attach SPA_META_Cursor).
 *
 * A driver stream (Video/Source) of 64x48 BGRx, every pixel 0x40, at 30 fps. Each buffer's SPA_META_Cursor:
 * id 1, position (20, 10), hotspot (1, 1); every other buffer a spa_meta_bitmap right after the cursor with a
 * 16x16 RGBA arrow (opaque red where x <= y, transparent elsewhere), the others bitmap_offset 0 (the shape kept).
 * Prints "node ID" on stdout once the stream has a node; runs until killed.
 * Build: cc cursor-producer.c $(pkg-config --cflags --libs libpipewire-0.3)
 */
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/buffer/meta.h>
#include <spa/pod/builder.h>
#include <stdio.h>
#include <string.h>

#define WIDTH 64
#define HEIGHT 48
#define SIDE 16
#define CURSOR_META_SIZE (sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + SIDE * SIDE * 4)

struct data {
    struct pw_main_loop *loop;
    struct spa_source *timer;
    struct pw_stream *stream;
    struct spa_hook listener;
    unsigned frame;
    int told;
};

static void on_timeout(void *userdata, uint64_t expirations) {
    struct data *d = userdata;
    struct pw_buffer *b = pw_stream_dequeue_buffer(d->stream);
    if (b == NULL) return;
    struct spa_buffer *buf = b->buffer;
    uint8_t *p = buf->datas[0].data;
    if (p == NULL || buf->datas[0].maxsize < WIDTH * HEIGHT * 4) { pw_stream_queue_buffer(d->stream, b); return; }
    memset(p, 0x40, WIDTH * HEIGHT * 4);
    struct spa_meta_cursor *mc = spa_buffer_find_meta_data(buf, SPA_META_Cursor, CURSOR_META_SIZE);
    if (mc != NULL) {
        mc->id = 1;
        mc->flags = 0;
        mc->position.x = 20;
        mc->position.y = 10;
        mc->hotspot.x = 1;
        mc->hotspot.y = 1;
        if (d->frame % 2 == 0) {
            mc->bitmap_offset = sizeof(struct spa_meta_cursor);
            struct spa_meta_bitmap *mb = SPA_PTROFF(mc, mc->bitmap_offset, struct spa_meta_bitmap);
            mb->format = SPA_VIDEO_FORMAT_RGBA;
            mb->size.width = SIDE;
            mb->size.height = SIDE;
            mb->stride = SIDE * 4;
            mb->offset = sizeof(struct spa_meta_bitmap);
            uint8_t *px = SPA_PTROFF(mb, mb->offset, uint8_t);
            for (int y = 0; y < SIDE; y++)
                for (int x = 0; x < SIDE; x++) {
                    uint8_t *q = px + y * mb->stride + x * 4;
                    uint8_t on = x <= y ? 255 : 0;
                    q[0] = on; q[1] = 0; q[2] = 0; q[3] = on;
                }
        } else {
            mc->bitmap_offset = 0;
        }
    }
    buf->datas[0].chunk->offset = 0;
    buf->datas[0].chunk->size = WIDTH * HEIGHT * 4;
    buf->datas[0].chunk->stride = WIDTH * 4;
    d->frame++;
    pw_stream_queue_buffer(d->stream, b);
}

static void on_state_changed(void *userdata, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    struct data *d = userdata;
    struct pw_loop *loop = pw_main_loop_get_loop(d->loop);
    if (!d->told && pw_stream_get_node_id(d->stream) != SPA_ID_INVALID) {
        printf("node %u\n", pw_stream_get_node_id(d->stream));
        fflush(stdout);
        d->told = 1;
    }
    if (state == PW_STREAM_STATE_STREAMING) {
        struct timespec first = { 0, 1 }, interval = { 0, 33 * SPA_NSEC_PER_MSEC };
        pw_loop_update_timer(loop, d->timer, &first, &interval, false);
    } else {
        pw_loop_update_timer(loop, d->timer, NULL, NULL, false);
    }
}

static void on_param_changed(void *userdata, uint32_t id, const struct spa_pod *param) {
    struct data *d = userdata;
    if (param == NULL || id != SPA_PARAM_Format) return;
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[2];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 8),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(WIDTH * HEIGHT * 4),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(WIDTH * 4),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
    params[1] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
        SPA_PARAM_META_size, SPA_POD_Int((int)CURSOR_META_SIZE));
    pw_stream_update_params(d->stream, params, 2);
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
};

int main(int argc, char *argv[]) {
    struct data d = { 0 };
    pw_init(&argc, &argv);
    d.loop = pw_main_loop_new(NULL);
    d.timer = pw_loop_add_timer(pw_main_loop_get_loop(d.loop), on_timeout, &d);
    d.stream = pw_stream_new_simple(pw_main_loop_get_loop(d.loop), "cursor-producer",
        pw_properties_new(PW_KEY_MEDIA_CLASS, "Video/Source", PW_KEY_MEDIA_TYPE, "Video",
                          PW_KEY_MEDIA_CATEGORY, "Source", PW_KEY_MEDIA_ROLE, "Screen", NULL),
        &stream_events, &d);
    uint8_t buffer[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    struct spa_rectangle size = SPA_RECTANGLE(WIDTH, HEIGHT);
    struct spa_fraction rate = SPA_FRACTION(30, 1);
    const struct spa_pod *params[1];
    params[0] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_Id(SPA_VIDEO_FORMAT_BGRx),
        SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&size),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&rate));
    if (pw_stream_connect(d.stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                          PW_STREAM_FLAG_DRIVER | PW_STREAM_FLAG_MAP_BUFFERS, params, 1) < 0) {
        fprintf(stderr, "cursor-producer: cannot connect\n");
        return 1;
    }
    pw_main_loop_run(d.loop);
    pw_stream_destroy(d.stream);
    pw_main_loop_destroy(d.loop);
    return 0;
}
