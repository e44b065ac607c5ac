// The parts of libpipewire-0.3 that Swift cannot call directly: method macros, variadic
// functions, compound-literal builders and string-literal constants. Every symbol is prefixed
// CPipeWireShim_ and is a plain function or constant, so Swift sees ordinary declarations.
#ifndef CPIPEWIRESHIM_H
#define CPIPEWIRESHIM_H

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <pthread.h>
#include <stdint.h>

#include "CPipeWireShimModule.h"

/// PW_ID_ANY and PW_ID_CORE.
extern const uint32_t CPipeWireShim_idAny;
extern const uint32_t CPipeWireShim_idCore;

/// Interface type names (PW_TYPE_INTERFACE_Node, PW_TYPE_INTERFACE_Metadata).
extern const char *const CPipeWireShim_typeNode;
extern const char *const CPipeWireShim_typeMetadata;

/// SPA_PROP_channelVolumes.
extern const uint32_t CPipeWireShim_propChannelVolumes;

/// Builds an EnumFormat param for interleaved 32-bit float at `rate` with `channels` channels
/// (FL FR for two) into `buffer`. Returns NULL if `size` bytes are not enough.
const struct spa_pod *CPipeWireShim_buildAudioFormat(void *buffer, uint32_t size, uint32_t rate, uint32_t channels);

/// Sets SPA_PROP_channelVolumes of every channel to `volume` (pw_stream_set_control is variadic).
int CPipeWireShim_setChannelVolumes(struct pw_stream *stream, uint32_t channels, float volume);

/// pw_properties_new(NULL, NULL).
struct pw_properties *CPipeWireShim_propertiesNew(void);

/// spa_dict_lookup; NULL when `dict` is NULL or has no such key.
const char *CPipeWireShim_dictLookup(const struct spa_dict *dict, const char *key);

/// spa_strerror.
const char *CPipeWireShim_strerror(int result);

// Method macros of pw_core, pw_registry and pw_metadata.
int CPipeWireShim_coreAddListener(
    struct pw_core *core, struct spa_hook *hook, const struct pw_core_events *events, void *data);
struct pw_registry *CPipeWireShim_coreGetRegistry(struct pw_core *core);
int CPipeWireShim_coreSync(struct pw_core *core);
int CPipeWireShim_registryAddListener(
    struct pw_registry *registry, struct spa_hook *hook, const struct pw_registry_events *events, void *data);
struct pw_metadata *CPipeWireShim_registryBindMetadata(struct pw_registry *registry, uint32_t id);
int CPipeWireShim_metadataAddListener(
    struct pw_metadata *metadata, struct spa_hook *hook, const struct pw_metadata_events *events, void *data);

// Timers on a pw_loop (spa_loop_utils methods).
typedef void (*CPipeWireShim_TimerCallback)(void *data, uint64_t expirations);
struct spa_source *CPipeWireShim_loopAddTimer(struct pw_loop *loop, CPipeWireShim_TimerCallback callback, void *data);
/// Fires first after `firstNanoseconds` (0 disarms), then every `intervalNanoseconds` (0: once).
int CPipeWireShim_loopUpdateTimer(
    struct pw_loop *loop, struct spa_source *source, uint64_t firstNanoseconds, uint64_t intervalNanoseconds);
void CPipeWireShim_loopDestroySource(struct pw_loop *loop, struct spa_source *source);

/// The scheduling policy of `thread` (SCHED_OTHER, SCHED_FIFO, SCHED_RR...), or -1.
int CPipeWireShim_schedulingPolicy(pthread_t thread);
/// The value of SCHED_FIFO and SCHED_RR on this system.
int CPipeWireShim_schedFIFO(void);
int CPipeWireShim_schedRR(void);

#endif
