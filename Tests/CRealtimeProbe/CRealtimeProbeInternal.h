// What the probe's C files share, not part of its interface: the counters of armed and watched
// threads, the COUNT macro every wrapper uses, and the macros that forward a wrapped call to the next
// definition in lookup order. The state is defined in CRealtimeProbe.c, hidden from other objects.
#ifndef CREALTIMEPROBE_INTERNAL_H
#define CREALTIMEPROBE_INTERNAL_H

#include "CRealtimeProbe.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))

typedef struct {
    _Atomic int64_t allocations, frees, locks, syscalls, callbacks;
} AtomicCounts;

extern __thread int armed __attribute__((tls_model("initial-exec"), visibility("hidden")));
// An armed thread's counts are its own, so tests measuring on different threads at the same time
// (Swift Testing runs them in parallel) never add to each other's.
extern __thread CRealtimeProbe_Counts counts __attribute__((tls_model("initial-exec"), visibility("hidden")));
extern __thread const char *last_call __attribute__((tls_model("initial-exec"), visibility("hidden")));
// The last call of each kind on the armed thread: names the culprit of each counter, not only the
// latest of all (a broken source that allocates and frees is named by its malloc, not by its free).
extern __thread CRealtimeProbe_LastCalls last_calls __attribute__((tls_model("initial-exec"), visibility("hidden")));
// Set on a thread between a pw_stream_dequeue_buffer that returned a buffer and its queue_buffer.
extern __thread int in_callback __attribute__((tls_model("initial-exec"), visibility("hidden")));
extern _Atomic(pthread_t) watched HIDDEN;
extern _Atomic int watching HIDDEN;
extern AtomicCounts watched_counts HIDDEN, watched_callback_counts HIDDEN;
extern _Atomic(const char *) watched_last_call HIDDEN;

static inline int is_watched(void) {
    return atomic_load_explicit(&watching, memory_order_relaxed)
        && pthread_equal(pthread_self(), atomic_load_explicit(&watched, memory_order_relaxed));
}

#define COUNT(counter, name) do { \
        if (armed) { counts.counter += 1; last_call = name; last_calls.counter = name; } \
        else if (is_watched()) { \
            atomic_fetch_add_explicit(&watched_counts.counter, 1, memory_order_relaxed); \
            if (in_callback) { \
                atomic_fetch_add_explicit(&watched_callback_counts.counter, 1, memory_order_relaxed); \
                atomic_store_explicit(&watched_last_call, name, memory_order_relaxed); \
            } \
        } \
    } while (0)

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CREALTIMEPROBE_SANITIZED 1
#endif
#endif

// MARK: forwarding to the next definition in lookup order (glibc's, or libpipewire's)

// The next definition is looked up on first use (dlsym may allocate, so a first call inside a
// counted window would count that too) and again by a constructor in each file, before any test runs.
#define NEXT(ret, name, params) \
    static ret (*next_##name) params; \
    static ret (*resolve_##name(void)) params { \
        ret (*f) params = __atomic_load_n(&next_##name, __ATOMIC_RELAXED); \
        if (!f) { \
            f = (ret (*) params)dlsym(RTLD_NEXT, #name); \
            __atomic_store_n(&next_##name, f, __ATOMIC_RELAXED); \
        } \
        return f; \
    }

// The condition variables have two versions in glibc; an unversioned dlsym may find the old one, so
// these ask for the current one by name.
#define NEXT_VERSIONED(ret, name, params, version) \
    static ret (*next_##name) params; \
    static ret (*resolve_##name(void)) params { \
        ret (*f) params = __atomic_load_n(&next_##name, __ATOMIC_RELAXED); \
        if (!f) { \
            f = (ret (*) params)dlvsym(RTLD_NEXT, #name, version); \
            if (!f) f = (ret (*) params)dlsym(RTLD_NEXT, #name); \
            __atomic_store_n(&next_##name, f, __ATOMIC_RELAXED); \
        } \
        return f; \
    }

#define FORWARD_VERSIONED(counter, ret, name, params, args, version) \
    NEXT_VERSIONED(ret, name, params, version) \
    ret name params { \
        COUNT(counter, #name); \
        return resolve_##name() args; \
    }

#define FORWARD(counter, ret, name, params, args) \
    NEXT(ret, name, params) \
    ret name params { \
        COUNT(counter, #name); \
        return resolve_##name() args; \
    }

#endif
