// click-recorder: records a sink's monitor on its own PipeWire client and prints, for each click it
// hears, the monotonic instant the sink played it. It shares no code with the library: the clock
// tests use it as the outside reference for the clock at the ear.
//
//   click-recorder SINK [THRESHOLD]
//
// A click is a sample above THRESHOLD (0.45) on the left channel after at least 10 ms below it. Each
// one is a line on standard output:
//
//   click HEARD OWN START QUANTUM
//
// - HEARD: the monotonic nanoseconds at which the sink played the click, placed as PipeWire's stream.h
//   places a captured frame: the capture cycle's `now` (pw_stream_get_time_n), less the delay it
//   reports from the device, plus the frame's offset in the buffer at the graph's rate. For a sink's
//   monitor the delay is 0: the monitor carries, in a cycle, what the sink played in it.
// - OWN: this process's own CLOCK_MONOTONIC, read when the cycle's callback began: an independent
//   bound. The callback of the cycle that carries a frame runs after that cycle began, and before the
//   next one, so START <= OWN < START + one quantum unless the cycle ran late.
// - START: HEARD less the frame's offset: the instant the buffer's first frame was played.
// - QUANTUM: the buffer's frames.
//
// `ready` is printed each time the stream starts streaming, and the recorder connects again (every
// 100 ms until it can) when the daemon goes away, so it outlives a daemon restart. It ends at SIGTERM,
// SIGINT or end of standard input.

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>

#define RATE 48000
#define CHANNELS 2

struct recorder {
    struct pw_main_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_stream *stream;
    struct spa_hook stream_listener;
    struct spa_source *retry;
    const char *sink;
    float threshold;
    // Data thread only: frames below the threshold since the last sample above it.
    uint64_t quiet_frames;
};

static int64_t monotonic_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void on_process(void *data) {
    struct recorder *r = data;
    int64_t own = monotonic_now();
    struct pw_buffer *buffer = pw_stream_dequeue_buffer(r->stream);
    if (buffer == NULL) return;
    struct pw_time time;
    memset(&time, 0, sizeof time);
    pw_stream_get_time_n(r->stream, &time, sizeof time);
    struct spa_data *d = &buffer->buffer->datas[0];
    if (d->data != NULL && d->chunk != NULL && time.rate.denom > 0) {
        const float *samples = SPA_PTROFF(d->data, d->chunk->offset, const float);
        uint32_t frames = d->chunk->size / (sizeof(float) * CHANNELS);
        int64_t delay = time.delay * 1000000000 * (int64_t)time.rate.num / (int64_t)time.rate.denom;
        int64_t start = time.now - delay;
        for (uint32_t i = 0; i < frames; i++) {
            if (fabsf(samples[i * CHANNELS]) > r->threshold) {
                if (r->quiet_frames >= RATE / 100) {
                    int64_t heard = start + (int64_t)i * 1000000000 / RATE;
                    printf("click %lld %lld %lld %u\n", (long long)heard, (long long)own, (long long)start, frames);
                    fflush(stdout);
                }
                r->quiet_frames = 0;
            } else {
                r->quiet_frames++;
            }
        }
    }
    pw_stream_queue_buffer(r->stream, buffer);
}

static void connect_stream(struct recorder *r);

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    (void)old;
    struct recorder *r = data;
    if (state == PW_STREAM_STATE_STREAMING) {
        printf("ready\n");
        fflush(stdout);
    } else if (state == PW_STREAM_STATE_ERROR) {
        fprintf(stderr, "click-recorder: the stream failed: %s\n", error ? error : "no reason given");
    }
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .process = on_process,
};

// The connection is gone (the daemon restarted or stopped): drop it and try again from the retry timer.
static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    struct recorder *r = data;
    if (id != PW_ID_CORE || res != -EPIPE) return;
    fprintf(stderr, "click-recorder: the connection to the daemon ended (%s); connecting again\n", message);
    struct timespec value = {0, 100 * 1000 * 1000};
    pw_loop_update_timer(pw_main_loop_get_loop(r->loop), r->retry, &value, &value, false);
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .error = on_core_error,
};

static void disconnect(struct recorder *r) {
    if (r->stream != NULL) {
        spa_hook_remove(&r->stream_listener);
        pw_stream_destroy(r->stream);
        r->stream = NULL;
    }
    if (r->core != NULL) {
        spa_hook_remove(&r->core_listener);
        pw_core_disconnect(r->core);
        r->core = NULL;
    }
}

// Connects to the daemon and records the sink's monitor; false when the daemon is not there yet.
static bool connect_daemon(struct recorder *r) {
    disconnect(r);
    r->core = pw_context_connect(r->context, NULL, 0);
    if (r->core == NULL) return false;
    pw_core_add_listener(r->core, &r->core_listener, &core_events, r);
    connect_stream(r);
    return true;
}

static void connect_stream(struct recorder *r) {
    struct pw_properties *properties = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Production",
        PW_KEY_NODE_NAME, "click-recorder", PW_KEY_APP_NAME, "click-recorder", PW_KEY_STREAM_CAPTURE_SINK, "true",
        "target.object", r->sink, "node.dont-reconnect", "true", NULL);
    r->stream = pw_stream_new(r->core, "click-recorder", properties);
    pw_stream_add_listener(r->stream, &r->stream_listener, &stream_events, r);
    uint8_t storage[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    struct spa_audio_info_raw info = {.format = SPA_AUDIO_FORMAT_F32, .rate = RATE, .channels = CHANNELS};
    info.position[0] = SPA_AUDIO_CHANNEL_FL;
    info.position[1] = SPA_AUDIO_CHANNEL_FR;
    const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
    pw_stream_connect(r->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
                      PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params, 1);
}

static void on_retry(void *data, uint64_t expirations) {
    (void)expirations;
    struct recorder *r = data;
    if (connect_daemon(r)) {
        struct timespec off = {0, 0};
        pw_loop_update_timer(pw_main_loop_get_loop(r->loop), r->retry, &off, &off, false);
    }
}

static void on_quit(void *data, int signal_number) {
    (void)signal_number;
    struct recorder *r = data;
    pw_main_loop_quit(r->loop);
}

// The test closes its end of the pipe: the recorder ends with it.
static void on_input(void *data, int fd, uint32_t mask) {
    struct recorder *r = data;
    char buffer[64];
    if ((mask & (SPA_IO_HUP | SPA_IO_ERR)) || read(fd, buffer, sizeof buffer) <= 0) pw_main_loop_quit(r->loop);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: click-recorder SINK [THRESHOLD]\n");
        return 2;
    }
    struct recorder r;
    memset(&r, 0, sizeof r);
    r.sink = argv[1];
    r.threshold = argc == 3 ? strtof(argv[2], NULL) : 0.45f;
    if (!(r.threshold > 0 && r.threshold < 1)) {
        fprintf(stderr, "click-recorder: the threshold '%s' is not between 0 and 1\n", argv[2]);
        return 2;
    }
    pw_init(&argc, &argv);
    r.loop = pw_main_loop_new(NULL);
    struct pw_loop *loop = pw_main_loop_get_loop(r.loop);
    r.context = pw_context_new(loop, NULL, 0);
    r.retry = pw_loop_add_timer(loop, on_retry, &r);
    pw_loop_add_signal(loop, SIGINT, on_quit, &r);
    pw_loop_add_signal(loop, SIGTERM, on_quit, &r);
    pw_loop_add_io(loop, STDIN_FILENO, SPA_IO_IN | SPA_IO_HUP | SPA_IO_ERR, false, on_input, &r);
    if (!connect_daemon(&r)) {
        fprintf(stderr, "click-recorder: cannot connect to the daemon: %s\n", strerror(errno));
        return 1;
    }
    pw_main_loop_run(r.loop);
    disconnect(&r);
    pw_context_destroy(r.context);
    pw_main_loop_destroy(r.loop);
    pw_deinit();
    return 0;
}
