// Loading a PipeWire module into a context of its own beside the client's (pw_context_load_module; its
// main loop iterated by the client's loop, so its events arrive on the client's loop thread) and knowing
// when it is gone: a module can destroy itself (its connection broke, one of its streams was
// disconnected), so the handle the engine keeps watches the module's destroy event.
#ifndef CPIPEWIRESHIM_MODULE_H
#define CPIPEWIRESHIM_MODULE_H

#include <pipewire/pipewire.h>
#include <stdbool.h>

/// A loaded module and the hook on its destroy event. Made and freed only by the functions below,
/// on the thread of the context's loop (or with the loop lock held).
typedef struct CPipeWireShim_Module CPipeWireShim_Module;

/// Called on the loop thread when the module is destroyed by anything but
/// CPipeWireShim_moduleUnload (the handle stays valid and reports it gone until unloaded).
typedef void (*CPipeWireShim_ModuleGone)(void *data);

/// Loads `name` (e.g. "libpipewire-module-echo-cancel") with `args` (SPA JSON) into a new context made
/// with `context`'s config.name, whose loop `context`'s main loop iterates. Returns NULL with errno set
/// (ENOENT: no such module or plugin) if it cannot be loaded.
CPipeWireShim_Module *CPipeWireShim_moduleLoad(
    struct pw_context *context, const char *name, const char *args, CPipeWireShim_ModuleGone gone, void *data);

/// Whether the module still exists.
bool CPipeWireShim_moduleIsAlive(const CPipeWireShim_Module *handle);

/// Destroys the module if it still exists, then its context, and frees the handle. The module is
/// destroyed on its context's data thread, and this waits for it (during which no process callback of
/// that context runs): a module's streams cannot then be torn down under their own process callbacks,
/// and every call of the teardown passes PipeWire 1.x's loop check (module.c says why). Call it with
/// the loop lock held, never on the data thread.
void CPipeWireShim_moduleUnload(CPipeWireShim_Module *handle);

#endif
