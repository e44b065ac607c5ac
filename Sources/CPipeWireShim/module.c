#include "CPipeWireShimModule.h"

#include <errno.h>
#include <pipewire/data-loop.h>
#include <pipewire/impl-module.h>
#include <semaphore.h>
#include <stdlib.h>

struct CPipeWireShim_Module {
    struct pw_impl_module *module;
    struct spa_hook listener;
    CPipeWireShim_ModuleGone gone;
    void *data;
};

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
    handle->module = pw_context_load_module(context, name, args, NULL);
    if (handle->module == NULL) {
        int saved = errno;
        free(handle);
        errno = saved;
        return NULL;
    }
    handle->gone = gone;
    handle->data = data;
    pw_impl_module_add_listener(handle->module, &handle->listener, &module_events, handle);
    return handle;
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
// was disconnected) still does so on the loop thread, from the context's work queue, which this cannot
// reach. With the connection gone no graph cycle drives its streams; a stream of it disconnected by the
// daemon while the others run could race the same way (not seen: the churn tests restart the daemon).
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
        struct pw_data_loop *data_loop = pw_context_get_data_loop(pw_impl_module_get_context(handle->module));
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
    free(handle);
}
