// tools/bench.d/sound-wire-cost.c: what one second of 48 kHz stereo sound costs the agent on the wire,
// PCM (what Protocol/frame-wire.md §2.10 carries) against Opus encoded in the agent (issue 28's question).
// Build and run: cc -O2 tools/bench.d/sound-wire-cost.c -lopus -lm -o /tmp/swc && /tmp/swc
// PCM: 100 messages of 1920 bytes + a ~200-byte header a second written to a Unix stream socket pair and
// read back (both ends' system calls, which is all PCM costs besides the header's formatting).
// Opus: libopus at 96 kbps, 10 ms frames, complexity 10 (the default) and 5, of a 1 kHz tone plus noise.
#include <opus/opus.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    enum { SECONDS = 20, FRAMES = 480, CH = 2 };
    static short pcm[FRAMES * CH];
    static unsigned char message[2200], back[2200], packet[4000];
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 1;
    memset(message, 'x', sizeof message);
    double start = cpu_seconds();
    for (int i = 0; i < SECONDS * 100; i++) {
        size_t size = 1920 + 210;
        if (write(fds[0], message, size) != (ssize_t)size) return 1;
        size_t got = 0;
        while (got < size) { ssize_t n = read(fds[1], back + got, size - got); if (n <= 0) return 1; got += n; }
    }
    double pcm_cpu = (cpu_seconds() - start) / SECONDS;
    printf("PCM on a Unix socket: %.3f ms CPU per second of sound (%.3f %% of a core), 213 kB/s\n", pcm_cpu * 1e3, pcm_cpu * 100);
    int complexities[] = {10, 5};
    for (int c = 0; c < 2; c++) {
        int error;
        OpusEncoder *encoder = opus_encoder_create(48000, CH, OPUS_APPLICATION_AUDIO, &error);
        opus_encoder_ctl(encoder, OPUS_SET_BITRATE(96000));
        opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexities[c]));
        long bytes = 0;
        start = cpu_seconds();
        for (int i = 0; i < SECONDS * 100; i++) {
            for (int n = 0; n < FRAMES; n++) {
                double t = (i * FRAMES + n) / 48000.0;
                short v = (short)(16384 * sin(2 * M_PI * 1000 * t) + (rand() % 2000 - 1000));
                pcm[2 * n] = v; pcm[2 * n + 1] = v;
            }
            bytes += opus_encode(encoder, pcm, FRAMES, packet, sizeof packet);
        }
        double opus_cpu = (cpu_seconds() - start) / SECONDS;
        printf("Opus 96 kbps 10 ms complexity %d: %.3f ms CPU per second of sound (%.2f %% of a core), %.1f kB/s\n",
               complexities[c], opus_cpu * 1e3, opus_cpu * 100, bytes / (double)SECONDS / 1000);
        opus_encoder_destroy(encoder);
    }
    return 0;
}
