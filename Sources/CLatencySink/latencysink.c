#include "CLatencySink.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/latency-utils.h>
#include <spa/utils/result.h>

#define CHANNELS 2
// PipeWire 0.3.73's flag for a stream whose buffers another stream's process callback dequeues (ours:
// the capture's, from the playback's); the headers the library builds against (0.3.65) predate it.
#ifndef PW_STREAM_FLAG_ASYNC
#define PW_STREAM_FLAG_ASYNC (1 << 10)
#endif
// Frames the ring holds: the delay plus the largest quantum, with room (a power of two).
#define RING_FRAMES (1u << 17)

struct CLatencySink_Sink {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct pw_stream *capture;
    struct pw_stream *playback;
    struct spa_hook capture_listener;
    struct spa_hook playback_listener;
    uint32_t delay_frames;
    // Loop thread: the latency the graph gave each side, kept because every declaration replaces both.
    struct spa_latency_info downstream;
    struct spa_latency_info upstream;
    // The library is PipeWire 1.x: the delay is declared as the node's ProcessLatency too.
    bool process_latency;
    // The library is 0.3.73 or later: the capture stream is connected with PW_STREAM_FLAG_ASYNC.
    bool async_capture;
    // Loop thread: the sink's state on the server, for the wait in create.
    enum pw_stream_state capture_state;
    char capture_error[128];
    // Data thread only: the ring of every frame received, and the frames written so far.
    float *ring;
    uint64_t written;
    atomic_uint_fast64_t cycles;
};

// Declares on the sink's port the latency downstream of it (what the playback stream learned from the
// target) plus the delay, and at least the one quantum a device plays late: the null sink the test
// records declares none, though it plays a quantum late like every driver (BlueZ and ALSA declare
// min_quantum 1). Loop thread.
//
// Both directions are declared every time, as module-loopback does: when the graph sets the port's
// upstream (output-direction) latency, pw_stream replaces every Latency param of the port with that one,
// and on PipeWire 1.x the adapter then finds no input-direction latency and declares 0 for the sink
// (0.3.65 kept the first declaration). On 1.x the delay is also given as the node's ProcessLatency, as
// PipeWire's own filter-chain does for its sink stream, so pw-dump shows what the node adds.
static void declare_latency(struct CLatencySink_Sink *sink) {
    struct spa_latency_info info = sink->downstream;
    struct spa_process_latency_info process = {.rate = sink->delay_frames};
    info.direction = SPA_DIRECTION_INPUT;
    if (info.min_quantum < 1.0f) {
        process.quantum = 1.0f - info.min_quantum;
        info.min_quantum = 1.0f;
    }
    if (info.max_quantum < 1.0f) info.max_quantum = 1.0f;
    info.min_rate += sink->delay_frames;
    info.max_rate += sink->delay_frames;
    uint8_t buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[3];
    uint32_t count = 0;
    params[count++] = spa_latency_build(&builder, SPA_PARAM_Latency, &info);
    params[count++] = spa_latency_build(&builder, SPA_PARAM_Latency, &sink->upstream);
    if (sink->process_latency) {
        params[count++] = spa_process_latency_build(&builder, SPA_PARAM_ProcessLatency, &process);
    }
    pw_stream_update_params(sink->capture, params, count);
}

// The target's latency, as the playback stream learns it: what is downstream of the sink. Loop thread.
static void playback_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    struct CLatencySink_Sink *sink = data;
    if (id != SPA_PARAM_Latency || param == NULL) return;
    struct spa_latency_info info;
    if (spa_latency_parse(param, &info) < 0 || info.direction != SPA_DIRECTION_INPUT) return;
    sink->downstream = info;
    declare_latency(sink);
}

// What the graph sets on the sink's port: the latency of what plays into it. It has just replaced the
// declaration, so the declaration is made again with it. Loop thread.
static void capture_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    struct CLatencySink_Sink *sink = data;
    if (id != SPA_PARAM_Latency || param == NULL) return;
    struct spa_latency_info info;
    if (spa_latency_parse(param, &info) < 0 || info.direction != SPA_DIRECTION_OUTPUT) return;
    sink->upstream = info;
    declare_latency(sink);
}

// Loop thread: wakes create's wait once the sink exists on the server (or failed).
static void capture_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    struct CLatencySink_Sink *sink = data;
    (void)old;
    sink->capture_state = state;
    if (error != NULL) snprintf(sink->capture_error, sizeof(sink->capture_error), "%s", error);
    pw_thread_loop_signal(sink->loop, false);
}

static void capture_process(void *data) {
    struct CLatencySink_Sink *sink = data;
    pw_stream_trigger_process(sink->playback);
}

// Data thread: every capture buffer waiting goes into the ring, and the playback buffer gets the frames
// `delay_frames` before the newest: the delay holds however the two streams' buffers queue (PipeWire
// 1.x can hand over more than one capture buffer in a cycle; taking one each time let them pile up, and
// the route played hundreds of milliseconds later than declared).
static void playback_process(void *data) {
    struct CLatencySink_Sink *sink = data;
    uint32_t frames = 0;
    struct pw_buffer *in;
    while ((in = pw_stream_dequeue_buffer(sink->capture)) != NULL) {
        struct spa_data *d = &in->buffer->datas[0];
        uint32_t offset = SPA_MIN(d->chunk->offset, d->maxsize);
        uint32_t size = SPA_MIN(d->chunk->size, d->maxsize - offset);
        frames = size / (CHANNELS * sizeof(float));
        const float *samples = SPA_PTROFF(d->data, offset, const float);
        for (uint32_t i = 0; i < frames; i++) {
            uint64_t at = (sink->written + i) & (RING_FRAMES - 1);
            sink->ring[at * CHANNELS] = samples[i * CHANNELS];
            sink->ring[at * CHANNELS + 1] = samples[i * CHANNELS + 1];
        }
        sink->written += frames;
        pw_stream_queue_buffer(sink->capture, in);
    }
    struct pw_buffer *out = pw_stream_dequeue_buffer(sink->playback);
    if (out != NULL) {
        struct spa_data *d = &out->buffer->datas[0];
        uint32_t capacity = d->maxsize / (CHANNELS * sizeof(float));
        uint32_t count = frames > 0 ? SPA_MIN(frames, capacity) : SPA_MIN((uint32_t)out->requested, capacity);
        float *samples = d->data;
        // The newest `count` frames written, `delay_frames` earlier.
        uint64_t end = frames > 0 ? sink->written : sink->written + count;
        for (uint32_t i = 0; i < count; i++) {
            uint64_t position = end - count + i;
            if (position < sink->delay_frames) {
                samples[i * CHANNELS] = 0;
                samples[i * CHANNELS + 1] = 0;
            } else {
                uint64_t at = (position - sink->delay_frames) & (RING_FRAMES - 1);
                samples[i * CHANNELS] = sink->ring[at * CHANNELS];
                samples[i * CHANNELS + 1] = sink->ring[at * CHANNELS + 1];
            }
        }
        d->chunk->offset = 0;
        d->chunk->stride = CHANNELS * sizeof(float);
        d->chunk->size = count * CHANNELS * sizeof(float);
        out->size = count;
        pw_stream_queue_buffer(sink->playback, out);
    }
    atomic_fetch_add(&sink->cycles, 1);
}

static const struct pw_stream_events capture_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = capture_state_changed,
    .param_changed = capture_param_changed,
    .process = capture_process,
};

static const struct pw_stream_events playback_events = {
    PW_VERSION_STREAM_EVENTS,
    .param_changed = playback_param_changed,
    .process = playback_process,
};

static const struct spa_pod *audio_format(struct spa_pod_builder *builder) {
    struct spa_audio_info_raw info = {
        .format = SPA_AUDIO_FORMAT_F32, .rate = 48000, .channels = CHANNELS,
        .position = {SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR}};
    return spa_format_audio_raw_build(builder, SPA_PARAM_EnumFormat, &info);
}

void CLatencySink_destroy(CLatencySink_Sink *sink) {
    if (sink == NULL) return;
    // The loop's lock is held for the teardown though its thread has ended: PipeWire 1.x checks that
    // calls on the loop's objects hold it ("called from wrong context").
    if (sink->loop != NULL) {
        pw_thread_loop_stop(sink->loop);
        pw_thread_loop_lock(sink->loop);
    }
    if (sink->capture != NULL) pw_stream_destroy(sink->capture);
    if (sink->playback != NULL) pw_stream_destroy(sink->playback);
    if (sink->core != NULL) pw_core_disconnect(sink->core);
    if (sink->context != NULL) pw_context_destroy(sink->context);
    if (sink->loop != NULL) {
        pw_thread_loop_unlock(sink->loop);
        pw_thread_loop_destroy(sink->loop);
    }
    free(sink->ring);
    free(sink);
}

uint64_t CLatencySink_cycles(CLatencySink_Sink *sink) { return atomic_load(&sink->cycles); }

CLatencySink_Sink *CLatencySink_create(const char *node_name, const char *target_sink, uint32_t delay_frames,
                              char *error, size_t error_size) {
    pw_init(NULL, NULL);
    if (delay_frames + 16384 > RING_FRAMES) {
        snprintf(error, error_size, "a delay of %u frames is more than the ring holds (%u)", delay_frames,
                 RING_FRAMES - 16384);
        return NULL;
    }
    struct CLatencySink_Sink *sink = calloc(1, sizeof(*sink));
    sink->delay_frames = delay_frames;
    sink->downstream = SPA_LATENCY_INFO(SPA_DIRECTION_INPUT);
    sink->upstream = SPA_LATENCY_INFO(SPA_DIRECTION_OUTPUT);
    unsigned major = 0, minor = 0, micro = 0;
    sscanf(pw_get_library_version(), "%u.%u.%u", &major, &minor, &micro);
    sink->process_latency = major >= 1;
    sink->async_capture = major >= 1 || (minor > 3) || (minor == 3 && micro >= 73);
    sink->ring = calloc(RING_FRAMES * CHANNELS, sizeof(float));
    sink->loop = pw_thread_loop_new("latency-sink", NULL);
    if (sink->loop == NULL) {
        snprintf(error, error_size, "pw_thread_loop_new failed: %s", strerror(errno));
        CLatencySink_destroy(sink);
        return NULL;
    }
    sink->context = pw_context_new(pw_thread_loop_get_loop(sink->loop), NULL, 0);
    pw_thread_loop_lock(sink->loop);
    pw_thread_loop_start(sink->loop);
    sink->core = sink->context ? pw_context_connect(sink->context, NULL, 0) : NULL;
    if (sink->core == NULL) {
        pw_thread_loop_unlock(sink->loop);
        snprintf(error, error_size, "no PipeWire daemon to connect to: %s", strerror(errno));
        CLatencySink_destroy(sink);
        return NULL;
    }
    // One group, as module-loopback's two streams: the sink side is scheduled by the driver its output
    // plays to, whether or not anything else links it to one. An application name of its own keeps
    // WirePlumber's stream restore from giving its output a volume saved for the process's streams.
    char group[96], output[160];
    snprintf(group, sizeof(group), "sharedsession-latency-sink-%d-%s", (int)getpid(), node_name);
    snprintf(output, sizeof(output), "%s.output", node_name);
    sink->capture = pw_stream_new(
        sink->core, node_name,
        pw_properties_new(PW_KEY_MEDIA_CLASS, "Audio/Sink", PW_KEY_NODE_NAME, node_name, PW_KEY_NODE_DESCRIPTION,
                          "SharedSession sink with a declared latency", "audio.position", "[ FL FR ]",
                          PW_KEY_PRIORITY_SESSION, "10", PW_KEY_NODE_GROUP, group, PW_KEY_NODE_LINK_GROUP, group,
                          PW_KEY_NODE_VIRTUAL, "true", PW_KEY_APP_NAME, "SharedSession latency sink", NULL));
    sink->playback = pw_stream_new(
        sink->core, output,
        pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback", PW_KEY_NODE_NAME, output,
                          PW_KEY_TARGET_OBJECT, target_sink, PW_KEY_NODE_PASSIVE, "true", PW_KEY_NODE_DONT_RECONNECT,
                          "true", "stream.dont-remix", "true", PW_KEY_NODE_GROUP, group, PW_KEY_NODE_LINK_GROUP,
                          group, PW_KEY_NODE_VIRTUAL, "true", PW_KEY_APP_NAME, "SharedSession latency sink", NULL));
    if (sink->capture == NULL || sink->playback == NULL) {
        pw_thread_loop_unlock(sink->loop);
        snprintf(error, error_size, "pw_stream_new failed: %s", strerror(errno));
        CLatencySink_destroy(sink);
        return NULL;
    }
    pw_stream_add_listener(sink->capture, &sink->capture_listener, &capture_events, sink);
    pw_stream_add_listener(sink->playback, &sink->playback_listener, &playback_events, sink);

    uint8_t buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
    const struct spa_pod *params[1] = {audio_format(&builder)};
    // The playback first, as module-loopback does: it is active before the capture triggers it.
    int result = pw_stream_connect(sink->playback, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                                   PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS |
                                       PW_STREAM_FLAG_RT_PROCESS | PW_STREAM_FLAG_TRIGGER,
                                   params, 1);
    if (result >= 0) {
        // The capture's buffers are dequeued in the playback's callback, not its own: ASYNC says so to
        // PipeWire 0.3.73 and later, which otherwise recycles them as if consumed in the capture's.
        result = pw_stream_connect(sink->capture, PW_DIRECTION_INPUT, PW_ID_ANY,
                                   PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS |
                                       PW_STREAM_FLAG_RT_PROCESS |
                                       (sink->async_capture ? PW_STREAM_FLAG_ASYNC : 0),
                                   params, 1);
    }
    if (result < 0) {
        pw_thread_loop_unlock(sink->loop);
        snprintf(error, error_size, "pw_stream_connect failed: %s", spa_strerror(result));
        CLatencySink_destroy(sink);
        return NULL;
    }
    // Declared from the start, before the target's latency arrives.
    declare_latency(sink);
    // Returns once the sink exists on the server (its node made, so a client can name it), or fails
    // after 5 s saying how far it got.
    struct timespec deadline;
    pw_thread_loop_get_time(sink->loop, &deadline, 5 * SPA_NSEC_PER_SEC);
    while (sink->capture_state != PW_STREAM_STATE_PAUSED && sink->capture_state != PW_STREAM_STATE_STREAMING &&
           sink->capture_state != PW_STREAM_STATE_ERROR) {
        if (pw_thread_loop_timed_wait_full(sink->loop, &deadline) != 0) break;
    }
    if (sink->capture_state != PW_STREAM_STATE_PAUSED && sink->capture_state != PW_STREAM_STATE_STREAMING) {
        snprintf(error, error_size, "the sink's node did not appear on the daemon (state %s%s%s)",
                 pw_stream_state_as_string(sink->capture_state), sink->capture_error[0] ? ": " : "",
                 sink->capture_error);
        pw_thread_loop_unlock(sink->loop);
        CLatencySink_destroy(sink);
        return NULL;
    }
    pw_thread_loop_unlock(sink->loop);
    return sink;
}
