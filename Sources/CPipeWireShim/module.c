#include "CPipeWireShimModule.h"

#include <errno.h>
#include <pipewire/data-loop.h>
#include <pipewire/impl-module.h>
#include <semaphore.h>
#include <stdlib.h>

// Why the module gets a context of its own, whose main loop is a plain pw_loop that the engine's loop
// iterates: the teardown below runs on the data thread (the race it closes is described there), and
// PipeWire 1.x checks that every stream and proxy call is made on its context's main loop, or with that
// loop's lock held (pw_loop_check: "pw_stream_destroy called from wrong context"). On the engine's own
// context that main loop is the engine's thread loop, whose lock the caller of the teardown holds while
// it waits, so the data thread could never pass. A plain loop that no thread has entered passes on any
// thread; it is entered only by iterate_module_loop, on the engine's loop thread, which cannot run while
// the caller of the teardown holds the engine's lock. The module's streams run on the new context's data
// thread (real-time as the engine's: the same config.name), and its events arrive on the engine's loop
// thread as before.
struct CPipeWireShim_Module {
    struct pw_loop *engine_loop;
    struct pw_loop *loop;
    struct pw_context *context;
    struct spa_source *wakeup;
    struct pw_impl_module *module;
    struct spa_hook listener;
    CPipeWireShim_ModuleGone gone;
    void *data;
};

static void iterate_module_loop(void *data, int fd, uint32_t mask) {
    CPipeWireShim_Module *handle = data;
    pw_loop_enter(handle->loop);
    pw_loop_iterate(handle->loop, 0);
    pw_loop_leave(handle->loop);
}

// Frees what moduleLoad made around the module: the engine loop's source, the context (its data thread
// stopped), the loop. The module must be gone.
static void free_handle(CPipeWireShim_Module *handle) {
    if (handle->wakeup) pw_loop_destroy_source(handle->engine_loop, handle->wakeup);
    if (handle->context) pw_context_destroy(handle->context);
    if (handle->loop) pw_loop_destroy(handle->loop);
    free(handle);
}

static void module_destroyed(void *data) {
    CPipeWireShim_Module *handle = data;
    spa_hook_remove(&handle->listener);
    handle->module = NULL;
    if (handle->gone) handle->gone(handle->data);
}

static const struct pw_impl_module_events module_events = {
    PW_VERSION_IMPL_MODULE_EVENTS,
    .destroy = module_destroyed,
};

CPipeWireShim_Module *CPipeWireShim_moduleLoad(
    struct pw_context *context, const char *name, const char *args, CPipeWireShim_ModuleGone gone, void *data) {
    CPipeWireShim_Module *handle = calloc(1, sizeof(*handle));
    if (handle == NULL) return NULL;
    handle->engine_loop = pw_context_get_main_loop(context);
    int saved = ENOMEM;
    struct pw_properties *props = NULL;
    const char *config = pw_properties_get(pw_context_get_properties(context), PW_KEY_CONFIG_NAME);
    handle->loop = pw_loop_new(NULL);
    if (handle->loop == NULL) goto failed;
    props = pw_properties_new(NULL, NULL);
    if (props && config) pw_properties_set(props, PW_KEY_CONFIG_NAME, config);
    handle->context = pw_context_new(handle->loop, props, 0);
    if (handle->context == NULL) goto failed;
    handle->wakeup = pw_loop_add_io(
        handle->engine_loop, pw_loop_get_fd(handle->loop), SPA_IO_IN, false, iterate_module_loop, handle);
    if (handle->wakeup == NULL) goto failed;
    handle->module = pw_context_load_module(handle->context, name, args, NULL);
    if (handle->module == NULL) goto failed;
    handle->gone = gone;
    handle->data = data;
    pw_impl_module_add_listener(handle->module, &handle->listener, &module_events, handle);
    return handle;
failed:
    saved = errno ? errno : saved;
    free_handle(handle);
    errno = saved;
    return NULL;
}

bool CPipeWireShim_moduleIsAlive(const CPipeWireShim_Module *handle) { return handle && handle->module != NULL; }

// Why the module is destroyed on the context's data loop: libpipewire-module-echo-cancel (0.3.65) destroys
// its streams one by one, and pw_stream_destroy emits the stream's destroy event, whose handler sets the
// module's pointer to that stream to NULL, before it disconnects the stream from the data loop. Destroyed
// on the loop thread, the capture stream's process callback can still be running on the data thread in
// that gap: it dequeued a buffer, ran the canceller, and queues the buffer back on impl->capture, now NULL
// (pw_stream_queue_buffer(NULL, ...): SIGSEGV). The sink stream's callback reaches the source's NULL the
// same way. On the data thread itself no process callback can run while the module is destroyed.
//
// The call is queued without PipeWire's blocking flag and waited for on a semaphore: the teardown invokes
// onto the data loop again (removing each node), which runs in place there but flushes the loop's queue
// first, and in 0.3.65 that flush acknowledges a queued blocking call before it has returned.
//
// A module that destroys itself (pw_impl_module_schedule_destroy: its connection broke, or a stream of it
// was disconnected) still does so on its loop (iterated on the engine's loop thread), from the context's
// work queue, which this cannot reach. With the connection gone no graph cycle drives its streams; a
// stream of it disconnected by the daemon while the others run could race the same way (not seen: the
// churn tests restart the daemon).
struct unload_job {
    struct pw_impl_module *module;
    sem_t done;
};

static int destroy_on_data_loop(
    struct spa_loop *loop, bool async, uint32_t seq, const void *data, size_t size, void *user_data) {
    struct unload_job *job = user_data;
    pw_impl_module_destroy(job->module);  // emits destroy: the hook clears the pointer
    sem_post(&job->done);
    return 0;
}

void CPipeWireShim_moduleUnload(CPipeWireShim_Module *handle) {
    if (handle == NULL) return;
    if (handle->module) {
        handle->gone = NULL;
        struct pw_data_loop *data_loop = pw_context_get_data_loop(handle->context);
        struct unload_job job = {.module = handle->module};
        sem_init(&job.done, 0, 0);
        // Without a running data thread the call runs here and now.
        int res = data_loop ? pw_data_loop_invoke(data_loop, destroy_on_data_loop, SPA_ID_INVALID, NULL, 0, false, &job)
                            : -ENOENT;
        if (res < 0) {
            // The data loop's queue is full (or there is none): no other way but here.
            pw_impl_module_destroy(handle->module);
        } else {
            while (sem_wait(&job.done) < 0 && errno == EINTR) {
            }
        }
        sem_destroy(&job.done);
    }
    free_handle(handle);
}
