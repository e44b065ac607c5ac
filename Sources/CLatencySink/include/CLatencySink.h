// A sink with a known, declared latency: what is played into it comes out of another sink a fixed
// number of frames later, and it declares that delay upstream on its port's Latency param, as BlueZ's
// media sink declares its codec and transport delay. A client stream playing into it sees the delay in
// pw_stream_get_time_n()'s `delay`; a player can test its lip sync without Bluetooth headphones.
//
// Built as PipeWire's module-loopback is: an "Audio/Sink" capture stream (the sink clients play into)
// whose process callback triggers a playback stream into the target sink in the same graph cycle (the
// two streams in one node group), with a ring between them that delays by exactly `delay_frames`.
#ifndef CLATENCYSINK_H
#define CLATENCYSINK_H

#include <stddef.h>
#include <stdint.h>

typedef struct CLatencySink_Sink CLatencySink_Sink;

/// Connects to the daemon of the environment (PIPEWIRE_REMOTE, XDG_RUNTIME_DIR) on a thread loop of its
/// own and makes the sink `node_name` (stereo, 48 kHz float), playing into the sink `target_sink`
/// `delay_frames` frames late. Returns NULL with a message in `error` when it cannot.
CLatencySink_Sink *CLatencySink_create(
    const char *node_name, const char *target_sink, uint32_t delay_frames, char *error, size_t error_size);

/// Cycles the sink has passed audio through.
uint64_t CLatencySink_cycles(CLatencySink_Sink *sink);

/// Disconnects, stops its thread and frees it. NULL is ignored.
void CLatencySink_destroy(CLatencySink_Sink *sink);

#endif
