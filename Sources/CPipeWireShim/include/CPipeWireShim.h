// The parts of libpipewire-0.3 that Swift cannot call directly: method macros, variadic
// functions, compound-literal builders and string-literal constants. Every symbol is prefixed
// CPipeWireShim_ and is a plain function or constant, so Swift sees ordinary declarations.
#ifndef CPIPEWIRESHIM_H
#define CPIPEWIRESHIM_H

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "CPipeWireShimModule.h"

/// PW_ID_ANY and PW_ID_CORE.
extern const uint32_t CPipeWireShim_idAny;
extern const uint32_t CPipeWireShim_idCore;

/// Interface type names (PW_TYPE_INTERFACE_Node, PW_TYPE_INTERFACE_Metadata).
extern const char *const CPipeWireShim_typeNode;
extern const char *const CPipeWireShim_typeMetadata;

/// SPA_PROP_channelVolumes and SPA_PROP_volume.
extern const uint32_t CPipeWireShim_propChannelVolumes;
extern const uint32_t CPipeWireShim_propVolume;

/// Builds an EnumFormat param for interleaved 32-bit float at `rate` with `channels` channels
/// (FL FR for two) into `buffer`. Returns NULL if `size` bytes are not enough.
const struct spa_pod *CPipeWireShim_buildAudioFormat(void *buffer, uint32_t size, uint32_t rate, uint32_t channels);

/// Sets SPA_PROP_channelVolumes of every channel to `volume` (pw_stream_set_control is variadic).
int CPipeWireShim_setChannelVolumes(struct pw_stream *stream, uint32_t channels, float volume);

/// Sets SPA_PROP_volume, the one volume PipeWire multiplies with the channel volumes.
int CPipeWireShim_setStreamVolume(struct pw_stream *stream, float volume);

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
/// Sets `key` of `subject` to `value` of `type` (NULL `value`: removes the key). Returns 0 or a negative errno.
int CPipeWireShim_metadataSetProperty(
    struct pw_metadata *metadata, uint32_t subject, const char *key, const char *type, const char *value);

// Timers on a pw_loop (spa_loop_utils methods).
typedef void (*CPipeWireShim_TimerCallback)(void *data, uint64_t expirations);
struct spa_source *CPipeWireShim_loopAddTimer(struct pw_loop *loop, CPipeWireShim_TimerCallback callback, void *data);
/// Fires first after `firstNanoseconds` (0 disarms), then every `intervalNanoseconds` (0: once).
int CPipeWireShim_loopUpdateTimer(
    struct pw_loop *loop, struct spa_source *source, uint64_t firstNanoseconds, uint64_t intervalNanoseconds);
void CPipeWireShim_loopDestroySource(struct pw_loop *loop, struct spa_source *source);

// Other clients' nodes and clients (node adoption): bound from the registry, their info and Props
// followed, their Props written.

/// PW_TYPE_INTERFACE_Client.
extern const char *const CPipeWireShim_typeClient;
/// Binds the node `id` of the registry (a `struct pw_node *`).
struct pw_node *CPipeWireShim_registryBindNode(struct pw_registry *registry, uint32_t id);
/// Binds the client `id` of the registry (a `struct pw_client *`).
struct pw_client *CPipeWireShim_registryBindClient(struct pw_registry *registry, uint32_t id);
int CPipeWireShim_nodeAddListener(
    struct pw_node *node, struct spa_hook *hook, const struct pw_node_events *events, void *data);
int CPipeWireShim_clientAddListener(
    struct pw_client *client, struct spa_hook *hook, const struct pw_client_events *events, void *data);
/// Asks for the node's Props now and on every change (pw_node_subscribe_params).
int CPipeWireShim_nodeSubscribeProps(struct pw_node *node);
/// Writes the node's Props `softVolumes`, every one of its `channels` set to `volume`. PipeWire's
/// audioconvert then plays the node at `volume` × its soft volumes instead of its `channelVolumes`
/// (until someone writes the channel volumes again). The channel volumes stay the user's: what a mixer
/// and the player show, and what WirePlumber saves and gives to the next stream of the same role; the
/// soft volumes are neither shown nor saved. PipeWire applies it at the node's next cycle.
int CPipeWireShim_nodeSetSoftVolumes(struct pw_node *node, uint32_t channels, float volume);
/// Reads channelVolumes (up to `maximum`), the mean of softVolumes and mute from a Props `pod`.
/// Returns how many channel volumes it read (0 if none), or -1 if `pod` is not a Props object; `soft`
/// is set to the soft volumes' mean, or -1 when absent; `mute` to 0 or 1, or -1 when absent.
int CPipeWireShim_parseProps(const struct spa_pod *pod, float *volumes, uint32_t maximum, float *soft, int *mute);

/// SPA_PARAM_Props.
extern const uint32_t CPipeWireShim_paramProps;
/// The node's state as an int (pw_node_info.state): PW_NODE_STATE_RUNNING is 3.
extern const int CPipeWireShim_nodeStateRunning;

/// An event source on `loop` (an eventfd): `callback` runs on the loop thread after a signal.
typedef void (*CPipeWireShim_EventCallback)(void *data, uint64_t count);
struct spa_source *CPipeWireShim_loopAddEvent(struct pw_loop *loop, CPipeWireShim_EventCallback callback, void *data);
/// Wakes the loop to run the event's callback; a write to an eventfd, safe from any thread.
int CPipeWireShim_loopSignalEvent(struct pw_loop *loop, struct spa_source *source);

/// The scheduling policy of `thread` (SCHED_OTHER, SCHED_FIFO, SCHED_RR...), or -1.
int CPipeWireShim_schedulingPolicy(pthread_t thread);
/// The value of SCHED_FIFO and SCHED_RR on this system.
int CPipeWireShim_schedFIFO(void);
int CPipeWireShim_schedRR(void);

#endif
