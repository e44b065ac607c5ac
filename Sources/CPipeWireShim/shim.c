#define _GNU_SOURCE
#include "CPipeWireShim.h"

#include <errno.h>
#include <sched.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/props.h>
#include <spa/pod/builder.h>
#include <spa/utils/result.h>
#include <spa/pod/iter.h>
#include <string.h>

// Swift reads and writes these structures field by field; fail the build if a header update moves them.
_Static_assert(offsetof(struct pw_buffer, buffer) == 0, "pw_buffer.buffer moved");
_Static_assert(sizeof(((struct pw_buffer *)0)->requested) == 8, "pw_buffer.requested is not 64-bit");
_Static_assert(sizeof(struct spa_chunk) == 16, "spa_chunk layout changed");
_Static_assert(sizeof(float) == 4, "samples are 32-bit floats");

const uint32_t CPipeWireShim_idAny = PW_ID_ANY;
const uint32_t CPipeWireShim_idCore = PW_ID_CORE;
const char *const CPipeWireShim_typeNode = PW_TYPE_INTERFACE_Node;
const char *const CPipeWireShim_typeMetadata = PW_TYPE_INTERFACE_Metadata;
const uint32_t CPipeWireShim_propChannelVolumes = SPA_PROP_channelVolumes;
const uint32_t CPipeWireShim_propVolume = SPA_PROP_volume;

const struct spa_pod *CPipeWireShim_buildAudioFormat(void *buffer, uint32_t size, uint32_t rate, uint32_t channels) {
    if (channels == 0 || channels > SPA_AUDIO_MAX_CHANNELS) return NULL;
    struct spa_pod_builder builder;
    spa_pod_builder_init(&builder, buffer, size);
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof info);
    info.format = SPA_AUDIO_FORMAT_F32;
    info.rate = rate;
    info.channels = channels;
    if (channels == 2) {
        info.position[0] = SPA_AUDIO_CHANNEL_FL;
        info.position[1] = SPA_AUDIO_CHANNEL_FR;
    } else if (channels == 1) {
        info.position[0] = SPA_AUDIO_CHANNEL_MONO;
    } else {
        info.flags = SPA_AUDIO_FLAG_UNPOSITIONED;
    }
    return spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info);
}

int CPipeWireShim_setChannelVolumes(struct pw_stream *stream, uint32_t channels, float volume) {
    float values[SPA_AUDIO_MAX_CHANNELS];
    if (channels == 0 || channels > SPA_AUDIO_MAX_CHANNELS) return -EINVAL;
    for (uint32_t i = 0; i < channels; i++) values[i] = volume;
    return pw_stream_set_control(stream, SPA_PROP_channelVolumes, channels, values, 0);
}

int CPipeWireShim_setStreamVolume(struct pw_stream *stream, float volume) {
    return pw_stream_set_control(stream, SPA_PROP_volume, 1, &volume, 0);
}

struct pw_properties *CPipeWireShim_propertiesNew(void) { return pw_properties_new(NULL, NULL); }

const char *CPipeWireShim_dictLookup(const struct spa_dict *dict, const char *key) {
    return dict ? spa_dict_lookup(dict, key) : NULL;
}

const char *CPipeWireShim_strerror(int result) { return spa_strerror(result); }

int CPipeWireShim_coreAddListener(
    struct pw_core *core, struct spa_hook *hook, const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, hook, events, data);
}

struct pw_registry *CPipeWireShim_coreGetRegistry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}

int CPipeWireShim_coreSync(struct pw_core *core) { return pw_core_sync(core, PW_ID_CORE, 0); }

int CPipeWireShim_registryAddListener(
    struct pw_registry *registry, struct spa_hook *hook, const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, hook, events, data);
}

struct pw_metadata *CPipeWireShim_registryBindMetadata(struct pw_registry *registry, uint32_t id) {
    return pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
}

int CPipeWireShim_metadataAddListener(
    struct pw_metadata *metadata, struct spa_hook *hook, const struct pw_metadata_events *events, void *data) {
    return pw_metadata_add_listener(metadata, hook, events, data);
}

int CPipeWireShim_metadataSetProperty(
    struct pw_metadata *metadata, uint32_t subject, const char *key, const char *type, const char *value) {
    return pw_metadata_set_property(metadata, subject, key, type, value);
}

struct spa_source *CPipeWireShim_loopAddTimer(struct pw_loop *loop, CPipeWireShim_TimerCallback callback, void *data) {
    return pw_loop_add_timer(loop, callback, data);
}

int CPipeWireShim_loopUpdateTimer(
    struct pw_loop *loop, struct spa_source *source, uint64_t firstNanoseconds, uint64_t intervalNanoseconds) {
    struct timespec value = {
        .tv_sec = (time_t)(firstNanoseconds / SPA_NSEC_PER_SEC),
        .tv_nsec = (long)(firstNanoseconds % SPA_NSEC_PER_SEC)};
    struct timespec interval = {
        .tv_sec = (time_t)(intervalNanoseconds / SPA_NSEC_PER_SEC),
        .tv_nsec = (long)(intervalNanoseconds % SPA_NSEC_PER_SEC)};
    return pw_loop_update_timer(loop, source, &value, &interval, false);
}

void CPipeWireShim_loopDestroySource(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}

int CPipeWireShim_schedulingPolicy(pthread_t thread) {
    int policy;
    struct sched_param param;
    if (pthread_getschedparam(thread, &policy, &param) != 0) return -1;
    // PipeWire's module-rt sets SCHED_FIFO | SCHED_RESET_ON_FORK; the flag comes back in the policy.
#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
    policy &= ~SCHED_RESET_ON_FORK;
    return policy;
}

int CPipeWireShim_schedFIFO(void) { return SCHED_FIFO; }
int CPipeWireShim_schedRR(void) { return SCHED_RR; }

const char *const CPipeWireShim_typeClient = PW_TYPE_INTERFACE_Client;
const uint32_t CPipeWireShim_paramProps = SPA_PARAM_Props;
const int CPipeWireShim_nodeStateRunning = PW_NODE_STATE_RUNNING;

struct pw_node *CPipeWireShim_registryBindNode(struct pw_registry *registry, uint32_t id) {
    return pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
}

struct pw_client *CPipeWireShim_registryBindClient(struct pw_registry *registry, uint32_t id) {
    return pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Client, PW_VERSION_CLIENT, 0);
}

int CPipeWireShim_nodeAddListener(
    struct pw_node *node, struct spa_hook *hook, const struct pw_node_events *events, void *data) {
    return pw_node_add_listener(node, hook, events, data);
}

int CPipeWireShim_clientAddListener(
    struct pw_client *client, struct spa_hook *hook, const struct pw_client_events *events, void *data) {
    return pw_client_add_listener(client, hook, events, data);
}

int CPipeWireShim_nodeSubscribeProps(struct pw_node *node) {
    uint32_t ids[1] = {SPA_PARAM_Props};
    return pw_node_subscribe_params(node, ids, 1);
}

int CPipeWireShim_nodeSetSoftVolumes(struct pw_node *node, uint32_t channels, float volume) {
    float values[SPA_AUDIO_MAX_CHANNELS];
    uint8_t buffer[1024];
    if (channels == 0 || channels > SPA_AUDIO_MAX_CHANNELS) return -EINVAL;
    for (uint32_t i = 0; i < channels; i++) values[i] = volume;
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof buffer);
    struct spa_pod_frame frame;
    spa_pod_builder_push_object(&builder, &frame, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
    spa_pod_builder_prop(&builder, SPA_PROP_softVolumes, 0);
    spa_pod_builder_array(&builder, sizeof(float), SPA_TYPE_Float, channels, values);
    const struct spa_pod *pod = spa_pod_builder_pop(&builder, &frame);
    if (pod == NULL) return -ENOSPC;
    return pw_node_set_param(node, SPA_PARAM_Props, 0, pod);
}

int CPipeWireShim_parseProps(const struct spa_pod *pod, float *volumes, uint32_t maximum, float *soft, int *mute) {
    *mute = -1;
    *soft = -1;
    if (pod == NULL || !spa_pod_is_object_type(pod, SPA_TYPE_OBJECT_Props)) return -1;
    int count = 0;
    const struct spa_pod_object *object = (const struct spa_pod_object *)pod;
    const struct spa_pod_prop *prop;
    SPA_POD_OBJECT_FOREACH(object, prop) {
        if (prop->key == SPA_PROP_channelVolumes) {
            uint32_t n = spa_pod_copy_array(&prop->value, SPA_TYPE_Float, volumes, maximum);
            count = (int)n;
        } else if (prop->key == SPA_PROP_softVolumes) {
            float values[SPA_AUDIO_MAX_CHANNELS];
            uint32_t n = spa_pod_copy_array(&prop->value, SPA_TYPE_Float, values, SPA_AUDIO_MAX_CHANNELS);
            if (n > 0) {
                float sum = 0;
                for (uint32_t i = 0; i < n; i++) sum += values[i];
                *soft = sum / (float)n;
            }
        } else if (prop->key == SPA_PROP_mute) {
            bool value = false;
            if (spa_pod_get_bool(&prop->value, &value) == 0) *mute = value ? 1 : 0;
        }
    }
    return count;
}

struct spa_source *CPipeWireShim_loopAddEvent(struct pw_loop *loop, CPipeWireShim_EventCallback callback, void *data) {
    return pw_loop_add_event(loop, callback, data);
}

int CPipeWireShim_loopSignalEvent(struct pw_loop *loop, struct spa_source *source) {
    return pw_loop_signal_event(loop, source);
}
