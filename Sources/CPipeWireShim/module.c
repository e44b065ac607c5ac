#include "CPipeWireShimModule.h"

#include <errno.h>
#include <pipewire/impl-module.h>
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

void CPipeWireShim_moduleUnload(CPipeWireShim_Module *handle) {
    if (handle == NULL) return;
    if (handle->module) {
        handle->gone = NULL;
        pw_impl_module_destroy(handle->module);  // emits destroy: the hook clears the pointer
    }
    free(handle);
}
