#ifndef CREALTIMEPROBE_H
#define CREALTIMEPROBE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/// What the probe counted on the armed threads, or on the watched one.
typedef struct {
    int64_t allocations;   // malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign
    int64_t frees;         // free of a non-NULL pointer
    int64_t locks;         // pthread mutex/rwlock/spin/cond waits, sem_wait, and every acquisition of the
                           // package's `Locked` (through CRealtimeProbe_noteLock, which Locked calls when
                           // the probe installs it)
    int64_t syscalls;      // every libc entry point that reaches (or may reach) the kernel: syscall() (the
                           // futex path of Synchronization.Mutex), read/write and their kin, open/close,
                           // poll/epoll, ioctl, the clocks (clock_gettime, gettimeofday, time), the sleeps,
                           // sched_yield, mmap/munmap/mprotect/madvise, eventfd, getpid/gettid, getrandom,
                           // and buffered stdio writes (the printf family and its _chk forms, fputs, fwrite,
                           // putc, puts, fflush), which may reach the kernel at any call
    int64_t callbacks;     // watched thread, in-callback counts only: process callbacks seen (one per
                           // pw_stream_dequeue_buffer that returned a buffer)
} CRealtimeProbe_Counts;

/// The last call the calling (armed) thread made of each kind ("" for none since the last reset).
typedef struct {
    const char *allocations;
    const char *frees;
    const char *locks;
    const char *syscalls;
} CRealtimeProbe_LastCalls;

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
/// The name of the last call counted on the calling thread while armed ("" if none): names the culprit
/// when a count is not 0.
const char *CRealtimeProbe_lastCall(void);
/// The last call of each kind counted on the calling thread while armed: names each counter's culprit.
CRealtimeProbe_LastCalls CRealtimeProbe_lastCalls(void);
/// Zeroes the watched thread's counters (whole thread and in-callback).
void CRealtimeProbe_resetWatched(void);
/// Reads the watched thread's counters: everything the thread did, PipeWire's own loop included.
CRealtimeProbe_Counts CRealtimeProbe_readWatched(void);
/// Reads the watched thread's counters made inside process callbacks only: between a
/// pw_stream_dequeue_buffer that returned a buffer and the pw_stream_queue_buffer that hands it back
/// (the package's own code, not PipeWire's loop around it).
CRealtimeProbe_Counts CRealtimeProbe_readWatchedInCallbacks(void);
/// The name of the last call counted inside a callback on the watched thread ("" if none).
const char *CRealtimeProbe_lastWatchedCall(void);
/// Whether the probe's wrappers are the ones the process calls: allocates once on an armed thread
/// and checks that it was counted (a positive control).
int CRealtimeProbe_isInterposing(void);
/// Whether this build runs under a sanitizer, whose runtime owns the libc entry points: the probe then
/// defines none of them and counts nothing.
int CRealtimeProbe_isSanitized(void);
/// Counts one lock acquisition on the calling thread (armed or watched). The tests install it as
/// `Locked`'s probe hook, so every acquisition of the package's own lock type is counted, even the
/// uncontended ones that Synchronization.Mutex takes with a single compare-exchange and no call.
void CRealtimeProbe_noteLock(void);
/// Voluntary context switches of the calling thread so far (getrusage RUSAGE_THREAD): a thread that
/// waited on anything (a futex, a sleep, a blocking read) gave up the CPU and this grows.
int64_t CRealtimeProbe_voluntarySwitches(void);
/// Calls syscall(SYS_getppid) through libc's syscall() (Swift cannot call a variadic function): a
/// harmless system call for the probe's positive controls.
long CRealtimeProbe_rawSyscall(void);
/// The calling thread, for CRealtimeProbe_watchThread.
pthread_t CRealtimeProbe_currentThread(void);
/// Bytes of heap in use now (glibc's mallinfo2: allocated chunks plus mmapped blocks), for the tests
/// that bound what an object costs (CRealtimeProbeHeap.c). Meaningless under a sanitizer, whose
/// runtime owns the heap.
size_t CRealtimeProbe_heapInUse(void);
/// Starts (1) or stops (0) counting the heap the calling thread holds, from 0: the bytes it allocates
/// less those it frees, so that tests running on other threads meanwhile do not move the figure.
/// Nothing is counted under a sanitizer.
void CRealtimeProbe_countThreadHeap(int on);
/// The heap the calling thread allocated and has not freed since CRealtimeProbe_countThreadHeap(1), in
/// usable bytes (malloc_usable_size).
int64_t CRealtimeProbe_threadHeap(void);

/// The positive controls: one for every function the probe wraps (CRealtimeProbeControls.c).
/// How many there are.
int CRealtimeProbe_controlCount(void);
/// The name of control `index`: the wrapped function it calls.
const char *CRealtimeProbe_controlName(int index);
/// Which counter control `index` must raise: 0 allocations, 1 frees, 2 locks, 3 system calls.
int CRealtimeProbe_controlCounter(int index);
/// Runs control `index` on the calling thread: sets up what the call needs, arms the thread (counters
/// reset), calls the wrapped function once, disarms and tears down. Returns 0, or -1 when the setup
/// failed. Read the counts with CRealtimeProbe_read and CRealtimeProbe_lastCall afterwards.
int CRealtimeProbe_runControl(int index);

#endif
