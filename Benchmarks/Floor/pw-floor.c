// pw-floor: the floor for the CPU benchmark. One process, N playback streams over plain
// libpipewire, each rendering a sine with a per-sample gain multiply on the real-time data thread
// (client-rt.conf, PW_STREAM_FLAG_RT_PROCESS), F32 stereo 48 kHz, as PipeWireEngine's streams are.
//
//   pw-floor STREAMS SECONDS          prints "ready" when every stream has started, exits after SECONDS
//   pw-floor --mixed STREAMS SECONDS  the same voices, but the overlays (all but the first) mixed in
//                                     the process into one second stream: the floor of a layout
//                                     that gives the daemon 2 nodes instead of STREAMS
#include <math.h>
#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATE 48000
#define CHANNELS 2

struct voice {
    struct pw_stream *stream;
    struct spa_hook hook;
    double phase, step;
    float gain;
    int streaming;
    struct voice *extra;  // mixed layout: more voices this stream adds in
    int extra_count;
};

static void render_voice(struct voice *v, float *out, uint32_t frames, int add) {
    for (uint32_t i = 0; i < frames; i++) {
        float s = (float)sin(v->phase) * v->gain;
        v->phase += v->step;
        if (v->phase > 2 * M_PI) v->phase -= 2 * M_PI;
        if (add) {
            out[i * 2] += s;
            out[i * 2 + 1] += s;
        } else {
            out[i * 2] = s;
            out[i * 2 + 1] = s;
        }
    }
}

static struct pw_thread_loop *loop;
static int streaming_count;

static void on_process(void *data) {
    struct voice *v = data;
    struct pw_buffer *b = pw_stream_dequeue_buffer(v->stream);
    if (b == NULL) return;
    struct spa_data *d = &b->buffer->datas[0];
    float *out = d->data;
    if (out != NULL) {
        uint32_t stride = sizeof(float) * CHANNELS;
        uint32_t frames = d->maxsize / stride;
        if (b->requested != 0 && b->requested < frames) frames = b->requested;
        render_voice(v, out, frames, 0);
        for (int k = 0; k < v->extra_count; k++) render_voice(&v->extra[k], out, frames, 1);
        d->chunk->offset = 0;
        d->chunk->stride = stride;
        d->chunk->size = frames * stride;
    }
    pw_stream_queue_buffer(v->stream, b);
}

static void on_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    struct voice *v = data;
    (void)old;
    (void)error;
    if (state == PW_STREAM_STATE_STREAMING && !v->streaming) {
        v->streaming = 1;
        streaming_count++;
        pw_thread_loop_signal(loop, false);
    }
}

static const struct pw_stream_events events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state,
    .process = on_process,
};

int main(int argc, char **argv) {
    int mixed = argc > 1 && strcmp(argv[1], "--mixed") == 0;
    if (argc < 3 + mixed) {
        fprintf(stderr, "usage: pw-floor [--mixed] STREAMS SECONDS\n");
        return 2;
    }
    int voices_count = atoi(argv[1 + mixed]);
    double seconds = atof(argv[2 + mixed]);
    int count = mixed ? (voices_count > 1 ? 2 : 1) : voices_count;
    pw_init(&argc, &argv);
    loop = pw_thread_loop_new("pw-floor", NULL);
    struct pw_context *context =
        pw_context_new(pw_thread_loop_get_loop(loop), pw_properties_new(PW_KEY_CONFIG_NAME, "client-rt.conf", NULL), 0);
    if (context == NULL) return 1;
    pw_thread_loop_lock(loop);
    pw_thread_loop_start(loop);
    struct pw_core *core = pw_context_connect(context, NULL, 0);
    if (core == NULL) {
        fprintf(stderr, "pw-floor: cannot connect\n");
        return 1;
    }
    struct voice *voices = calloc((size_t)voices_count, sizeof *voices);
    for (int i = 0; i < voices_count; i++) {
        voices[i].step = 2 * M_PI * (220.0 + 10.0 * i) / RATE;
        voices[i].gain = i == 0 ? 0.2f : 0.01f;
    }
    if (mixed && voices_count > 2) {
        voices[1].extra = &voices[2];
        voices[1].extra_count = voices_count - 2;
    }
    for (int i = 0; i < count; i++) {
        struct voice *v = &voices[i];
        char name[64];
        snprintf(name, sizeof name, "pw-floor.%d", i);
        v->stream = pw_stream_new(core, name,
            pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback", PW_KEY_MEDIA_ROLE,
                "Movie", PW_KEY_NODE_NAME, name, NULL));
        pw_stream_add_listener(v->stream, &v->hook, &events, v);
        uint8_t buffer[1024];
        struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof buffer);
        struct spa_audio_info_raw info = SPA_AUDIO_INFO_RAW_INIT(
            .format = SPA_AUDIO_FORMAT_F32, .channels = CHANNELS, .rate = RATE);
        info.position[0] = SPA_AUDIO_CHANNEL_FL;
        info.position[1] = SPA_AUDIO_CHANNEL_FR;
        const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
        pw_stream_connect(v->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
            PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params, 1);
    }
    while (streaming_count < count) {
        if (pw_thread_loop_timed_wait(loop, 5) != 0) {
            fprintf(stderr, "pw-floor: only %d of %d streams started\n", streaming_count, count);
            break;
        }
    }
    pw_thread_loop_unlock(loop);
    printf("ready\n");
    fflush(stdout);
    struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&t, NULL);
    pw_thread_loop_lock(loop);
    for (int i = 0; i < count; i++) pw_stream_destroy(voices[i].stream);
    pw_thread_loop_unlock(loop);
    pw_thread_loop_stop(loop);
    pw_context_destroy(context);
    pw_thread_loop_destroy(loop);
    free(voices);
    return 0;
}
