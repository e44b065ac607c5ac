#ifndef CDELAYSINK_H
#define CDELAYSINK_H

// A sink for tests that behaves like a Bluetooth headset as PipeWire sees one: audio played into it
// comes out of another sink (the test daemon's null sink, which the test records) a known number of
// frames later, and the sink declares that delay upstream on its port's Latency param, as BlueZ's
// media sink declares its codec and transport delay. A client stream playing into it sees the delay
// in pw_stream_get_time_n()'s `delay`.
//
// Built as PipeWire's module-loopback is: an "Audio/Sink" capture stream (the sink clients play into)
// whose process callback triggers a playback stream into the target sink in the same graph cycle,
// with a ring between them that delays by exactly `delay_frames`.

#include <stddef.h>
#include <stdint.h>

typedef struct delay_sink delay_sink;

/// Connects to the daemon of the environment (XDG_RUNTIME_DIR) on a thread loop of its own and makes
/// the sink `node_name` (stereo, 48 kHz float), playing into `target_sink` `delay_frames` frames late.
/// Returns NULL with a message in `error` when it cannot.
delay_sink *delay_sink_create(const char *node_name, const char *target_sink, uint32_t delay_frames,
                              char *error, size_t error_size);

/// Cycles the sink has passed audio through.
uint64_t delay_sink_cycles(delay_sink *sink);

/// Disconnects, stops its thread and frees it. NULL is ignored.
void delay_sink_destroy(delay_sink *sink);

#endif
