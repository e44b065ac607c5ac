#ifndef CREALTIMEPROBE_H
#define CREALTIMEPROBE_H

#include <pthread.h>
#include <stdint.h>

/// What the probe counted on the armed threads, or on the watched one.
typedef struct {
    int64_t allocations;   // malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign
    int64_t frees;         // free of a non-NULL pointer
    int64_t locks;         // pthread mutex, rwlock and cond waits, sem_wait
    int64_t syscalls;      // libc syscall(): the futex path of Synchronization.Mutex and the runtime
} CRealtimeProbe_Counts;

/// Starts counting on the calling thread.
void CRealtimeProbe_armCurrentThread(void);
/// Stops counting on the calling thread.
void CRealtimeProbe_disarmCurrentThread(void);
/// Counts every call made on `thread` from now on (one watched thread at a time), in the watched
/// counters (CRealtimeProbe_readWatched), apart from the armed threads' counters.
void CRealtimeProbe_watchThread(pthread_t thread);
/// Stops watching.
void CRealtimeProbe_unwatch(void);
/// Zeroes the calling thread's armed counters.
void CRealtimeProbe_reset(void);
/// Reads the calling thread's armed counters (each armed thread counts only its own calls).
CRealtimeProbe_Counts CRealtimeProbe_read(void);
/// Zeroes the watched thread's counters.
void CRealtimeProbe_resetWatched(void);
/// Reads the watched thread's counters.
CRealtimeProbe_Counts CRealtimeProbe_readWatched(void);
/// Whether the probe's wrappers are the ones the process calls: allocates once on an armed thread
/// and checks that it was counted (a positive control).
int CRealtimeProbe_isInterposing(void);
/// The calling thread, for CRealtimeProbe_watchThread.
pthread_t CRealtimeProbe_currentThread(void);

#endif
