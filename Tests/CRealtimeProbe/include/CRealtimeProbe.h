#ifndef CREALTIMEPROBE_H
#define CREALTIMEPROBE_H

#include <pthread.h>
#include <stdint.h>

/// What the probe counted on the watched threads.
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
/// Counts every call made on `thread` from now on (one watched thread at a time).
void CRealtimeProbe_watchThread(pthread_t thread);
/// Stops watching.
void CRealtimeProbe_unwatch(void);
/// Zeroes the counters.
void CRealtimeProbe_reset(void);
/// Reads the counters.
CRealtimeProbe_Counts CRealtimeProbe_read(void);
/// Whether the probe's wrappers are the ones the process calls: allocates once on an armed thread
/// and checks that it was counted (a positive control).
int CRealtimeProbe_isInterposing(void);
/// The calling thread, for CRealtimeProbe_watchThread.
pthread_t CRealtimeProbe_currentThread(void);

#endif
