// pw_stream_dequeue_buffer, interposed: defined in the executable, it is the one the dlopened
// libpipewire-module-echo-cancel resolves too. When the caller is the canceller's capture stream
// ("Echo-Cancel Capture") and SHAREDSESSION_WIDEN_ECHO_RACE_US is set, it sleeps that long after the
// dequeue, on the data thread: the capture callback then holds its buffer for most of each cycle, and a
// teardown that NULLs the module's capture pointer meanwhile makes the callback's pw_stream_queue_buffer
// fault (issue 23). A test-only helper: sleeping on the data thread is what it is for.
#define _GNU_SOURCE
#include "CEchoRaceWidener.h"

#include <dlfcn.h>
#include <pipewire/stream.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_ulong holds;

unsigned long CEchoRaceWidener_holds(void) { return atomic_load(&holds); }

struct pw_buffer *pw_stream_dequeue_buffer(struct pw_stream *stream) {
    static struct pw_buffer *(*real)(struct pw_stream *);
    static long widen_us = -1;
    if (real == NULL) real = (struct pw_buffer * (*)(struct pw_stream *)) dlsym(RTLD_NEXT, "pw_stream_dequeue_buffer");
    if (widen_us < 0) {
        const char *value = getenv("SHAREDSESSION_WIDEN_ECHO_RACE_US");
        widen_us = value ? atol(value) : 0;
    }
    struct pw_buffer *buffer = real(stream);
    if (buffer != NULL && widen_us > 0 && strcmp(pw_stream_get_name(stream), "Echo-Cancel Capture") == 0) {
        atomic_fetch_add(&holds, 1);
        struct timespec pause = {widen_us / 1000000, (widen_us % 1000000) * 1000};
        nanosleep(&pause, NULL);
    }
    return buffer;
}
