// Counts allocations, locks and system calls made on chosen threads, by defining the libc entry
// points in the test executable itself: ELF symbol lookup finds the executable's definitions first,
// so every shared library (the Swift runtime, libpipewire) calls these. Each wrapper forwards to
// glibc's own implementation and counts only on an armed or watched thread, so tests running in
// parallel on other threads do not disturb a measurement. Armed threads and the watched thread have
// counters of their own, so a test that arms its thread and one that watches an engine's data
// thread can run at the same time without reading or resetting each other's counts.
//
// What the wrappers cannot see, and what covers it:
// - An uncontended Synchronization.Mutex is one compare-exchange inlined into the caller (Swift 6.3's
//   _MutexHandle.lock() is @_alwaysEmitIntoClient/@_transparent and calls nothing until the word is
//   taken), no call at all, so no interposed symbol can see it. The package's own lock type, `Locked`,
//   calls a hook the tests set to CRealtimeProbe_noteLock, so each of its acquisitions counts as a
//   lock, and a test (RealtimeRenderTests, "every lock of the package is a Locked") fails if any
//   source file outside Locked.swift uses a Mutex directly. A contended Mutex waits through
//   syscall(SYS_futex), which counts as a system call.
// - Buffered stdio writes (printf and its kin, fputs, fwrite, Swift's print, swift-log's stream
//   handler) mostly never reach the kernel: the stdio entry points are wrapped (CRealtimeProbeStdio.c)
//   and each call counts as a system call (it may flush, and it takes the FILE's lock), so a render
//   path that logs is caught at its first line, not at the buffer's flush.
// - glibc's internal calls (a pthread mutex's futex, eventfd_write's write) do not go through the
//   symbol table; the public entry points that lead to them are wrapped instead (pthread locks,
//   eventfd_read/eventfd_write), and CRealtimeProbe_voluntarySwitches sees any wait that blocked.
#define _GNU_SOURCE
// The probe's stdio wrappers (CRealtimeProbeStdio.c) define functions that glibc's headers also offer as
// inline functions in an optimized build (putchar, vprintf): without inlines the headers only declare
// them. Every file of the probe includes the headers the same way.
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include "CRealtimeProbeInternal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

// The probe's state, shared with CRealtimeProbeStdio.c through CRealtimeProbeInternal.h.
__thread int armed __attribute__((tls_model("initial-exec")));
__thread CRealtimeProbe_Counts counts __attribute__((tls_model("initial-exec")));
__thread const char *last_call __attribute__((tls_model("initial-exec")));
__thread CRealtimeProbe_LastCalls last_calls __attribute__((tls_model("initial-exec")));
__thread int in_callback __attribute__((tls_model("initial-exec")));
_Atomic(pthread_t) watched;
_Atomic int watching;
AtomicCounts watched_counts, watched_callback_counts;
_Atomic(const char *) watched_last_call;

void CRealtimeProbe_armCurrentThread(void) { armed = 1; }
void CRealtimeProbe_disarmCurrentThread(void) { armed = 0; }
void CRealtimeProbe_watchThread(pthread_t thread) {
    atomic_store(&watched, thread);
    atomic_store(&watching, 1);
}
void CRealtimeProbe_unwatch(void) { atomic_store(&watching, 0); }
pthread_t CRealtimeProbe_currentThread(void) { return pthread_self(); }

void CRealtimeProbe_reset(void) {
    memset(&counts, 0, sizeof counts);
    last_call = "";
    CRealtimeProbe_LastCalls none = {"", "", "", ""};
    last_calls = none;
}

CRealtimeProbe_Counts CRealtimeProbe_read(void) { return counts; }
const char *CRealtimeProbe_lastCall(void) { return last_call ? last_call : ""; }
CRealtimeProbe_LastCalls CRealtimeProbe_lastCalls(void) {
    CRealtimeProbe_LastCalls result = last_calls;
    if (!result.allocations) result.allocations = "";
    if (!result.frees) result.frees = "";
    if (!result.locks) result.locks = "";
    if (!result.syscalls) result.syscalls = "";
    return result;
}

static void reset_atomic(AtomicCounts *c) {
    atomic_store(&c->allocations, 0);
    atomic_store(&c->frees, 0);
    atomic_store(&c->locks, 0);
    atomic_store(&c->syscalls, 0);
    atomic_store(&c->callbacks, 0);
}

static CRealtimeProbe_Counts read_atomic(AtomicCounts *c) {
    CRealtimeProbe_Counts result = {
        atomic_load(&c->allocations), atomic_load(&c->frees), atomic_load(&c->locks), atomic_load(&c->syscalls),
        atomic_load(&c->callbacks)};
    return result;
}

void CRealtimeProbe_resetWatched(void) {
    reset_atomic(&watched_counts);
    reset_atomic(&watched_callback_counts);
    atomic_store(&watched_last_call, "");
}

CRealtimeProbe_Counts CRealtimeProbe_readWatched(void) { return read_atomic(&watched_counts); }
CRealtimeProbe_Counts CRealtimeProbe_readWatchedInCallbacks(void) { return read_atomic(&watched_callback_counts); }
const char *CRealtimeProbe_lastWatchedCall(void) {
    const char *name = atomic_load(&watched_last_call);
    return name ? name : "";
}

void CRealtimeProbe_noteLock(void) { COUNT(locks, "Locked.withLock"); }

int64_t CRealtimeProbe_voluntarySwitches(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return -1;
    return usage.ru_nvcsw;
}

long CRealtimeProbe_rawSyscall(void) { return syscall(SYS_getppid); }

int CRealtimeProbe_isInterposing(void) {
    int64_t before = counts.allocations;
    int was = armed;
    armed = 1;
    void *volatile p = malloc(24);
    armed = was;
    free(p);
    return counts.allocations > before;
}

int CRealtimeProbe_isSanitized(void) {
#ifdef CREALTIMEPROBE_SANITIZED
    return 1;
#else
    return 0;
#endif
}

// The heap a thread that counts its own (CRealtimeProbe_countThreadHeap) holds: what it allocated less
// what it freed, in usable bytes, whatever other threads do meanwhile.
static __thread int heap_counting __attribute__((tls_model("initial-exec")));
static __thread int64_t heap_bytes __attribute__((tls_model("initial-exec")));
static inline void *held(void *p) {
    if (heap_counting && p) heap_bytes += (int64_t)malloc_usable_size(p);
    return p;
}
static inline void letting_go(void *p) {
    if (heap_counting && p) heap_bytes -= (int64_t)malloc_usable_size(p);
}
void CRealtimeProbe_countThreadHeap(int on) {
    heap_counting = on;
    heap_bytes = 0;
}
int64_t CRealtimeProbe_threadHeap(void) { return heap_bytes; }

// Under a sanitizer its runtime owns these symbols; the probe steps aside and reports that it is
// not interposing (CRealtimeProbe_isSanitized), and Scripts/test leaves the probe's tests out of that pass.
#ifndef CREALTIMEPROBE_SANITIZED

// MARK: allocation

void *malloc(size_t size) { COUNT(allocations, "malloc"); return held(__libc_malloc(size)); }
void *calloc(size_t n, size_t size) { COUNT(allocations, "calloc"); return held(__libc_calloc(n, size)); }
void *realloc(void *p, size_t size) {
    COUNT(allocations, "realloc");
    int64_t before = heap_counting && p ? (int64_t)malloc_usable_size(p) : 0;
    void *moved = __libc_realloc(p, size);
    // A failed realloc keeps the old block; size 0 frees it.
    if (moved || size == 0) heap_bytes -= before;
    return held(moved);
}
void free(void *p) {
    if (p) COUNT(frees, "free");
    letting_go(p);
    __libc_free(p);
}
void *memalign(size_t alignment, size_t size) {
    COUNT(allocations, "memalign");
    return held(__libc_memalign(alignment, size));
}
void *aligned_alloc(size_t alignment, size_t size) {
    COUNT(allocations, "aligned_alloc");
    return held(__libc_memalign(alignment, size));
}
int posix_memalign(void **out, size_t alignment, size_t size) {
    COUNT(allocations, "posix_memalign");
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = held(__libc_memalign(alignment, size));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

// MARK: locks

FORWARD(locks, int, pthread_mutex_lock, (pthread_mutex_t *m), (m))
FORWARD(locks, int, pthread_mutex_trylock, (pthread_mutex_t *m), (m))
FORWARD(locks, int, pthread_mutex_timedlock, (pthread_mutex_t *m, const struct timespec *t), (m, t))
FORWARD(locks, int, pthread_rwlock_rdlock, (pthread_rwlock_t *l), (l))
FORWARD(locks, int, pthread_rwlock_wrlock, (pthread_rwlock_t *l), (l))
FORWARD(locks, int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *l), (l))
FORWARD(locks, int, pthread_rwlock_trywrlock, (pthread_rwlock_t *l), (l))
FORWARD(locks, int, pthread_spin_lock, (pthread_spinlock_t *l), (l))
FORWARD_VERSIONED(locks, int, pthread_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), (c, m), "GLIBC_2.3.2")
FORWARD_VERSIONED(locks, int, pthread_cond_timedwait,
    (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t), (c, m, t), "GLIBC_2.3.2")
FORWARD(locks, int, sem_wait, (sem_t *s), (s))
FORWARD(locks, int, sem_timedwait, (sem_t *s, const struct timespec *t), (s, t))

// MARK: system calls: the raw entry point and the wrappers a render path could reach

NEXT(long, syscall, (long, ...))
long syscall(long number, ...) {
    COUNT(syscalls, "syscall");
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    return resolve_syscall()(number, a, b, c, d, e, f);
}

FORWARD(syscalls, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
FORWARD(syscalls, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
FORWARD(syscalls, ssize_t, readv, (int fd, const struct iovec *v, int n), (fd, v, n))
FORWARD(syscalls, ssize_t, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
FORWARD(syscalls, ssize_t, pread64, (int fd, void *buf, size_t n, off_t o), (fd, buf, n, o))
FORWARD(syscalls, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off_t o), (fd, buf, n, o))
FORWARD(syscalls, ssize_t, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
FORWARD(syscalls, ssize_t, send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
FORWARD(syscalls, ssize_t, recvmsg, (int fd, struct msghdr *m, int flags), (fd, m, flags))
FORWARD(syscalls, ssize_t, sendmsg, (int fd, const struct msghdr *m, int flags), (fd, m, flags))
FORWARD(syscalls, int, close, (int fd), (fd))
FORWARD(syscalls, int, poll, (struct pollfd *p, nfds_t n, int t), (p, n, t))
FORWARD(syscalls, int, ppoll, (struct pollfd *p, nfds_t n, const struct timespec *t, const sigset_t *s),
    (p, n, t, s))
FORWARD(syscalls, int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t), (n, r, w, e, t))
FORWARD(syscalls, int, epoll_wait, (int fd, struct epoll_event *e, int n, int t), (fd, e, n, t))
FORWARD(syscalls, int, epoll_pwait, (int fd, struct epoll_event *e, int n, int t, const sigset_t *s),
    (fd, e, n, t, s))
FORWARD(syscalls, int, eventfd_read, (int fd, eventfd_t *v), (fd, v))
FORWARD(syscalls, int, eventfd_write, (int fd, eventfd_t v), (fd, v))
FORWARD(syscalls, int, clock_gettime, (clockid_t c, struct timespec *t), (c, t))
FORWARD(syscalls, int, gettimeofday, (struct timeval *restrict t, void *restrict z), (t, z))
FORWARD(syscalls, time_t, time, (time_t *t), (t))
FORWARD(syscalls, int, nanosleep, (const struct timespec *r, struct timespec *rem), (r, rem))
FORWARD(syscalls, int, clock_nanosleep, (clockid_t c, int f, const struct timespec *r, struct timespec *rem),
    (c, f, r, rem))
FORWARD(syscalls, int, usleep, (useconds_t u), (u))
FORWARD(syscalls, unsigned int, sleep, (unsigned int s), (s))
FORWARD(syscalls, int, sched_yield, (void), ())
FORWARD(syscalls, void *, mmap, (void *a, size_t n, int p, int f, int fd, off_t o), (a, n, p, f, fd, o))
FORWARD(syscalls, int, munmap, (void *a, size_t n), (a, n))
FORWARD(syscalls, int, mprotect, (void *a, size_t n, int p), (a, n, p))
FORWARD(syscalls, int, madvise, (void *a, size_t n, int advice), (a, n, advice))
FORWARD(syscalls, pid_t, getpid, (void), ())
FORWARD(syscalls, pid_t, gettid, (void), ())
FORWARD(syscalls, ssize_t, getrandom, (void *buf, size_t n, unsigned int flags), (buf, n, flags))
FORWARD(syscalls, int, sem_post, (sem_t *s), (s))
FORWARD_VERSIONED(syscalls, int, pthread_cond_signal, (pthread_cond_t *c), (c), "GLIBC_2.3.2")
FORWARD_VERSIONED(syscalls, int, pthread_cond_broadcast, (pthread_cond_t *c), (c), "GLIBC_2.3.2")

NEXT(int, ioctl, (int, unsigned long, ...))
int ioctl(int fd, unsigned long request, ...) {
    COUNT(syscalls, "ioctl");
    va_list ap;
    va_start(ap, request);
    void *argument = va_arg(ap, void *);
    va_end(ap);
    return resolve_ioctl()(fd, request, argument);
}

NEXT(int, open, (const char *, int, ...))
int open(const char *path, int flags, ...) {
    COUNT(syscalls, "open");
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return resolve_open()(path, flags, mode);
}

NEXT(int, openat, (int, const char *, int, ...))
int openat(int dir, const char *path, int flags, ...) {
    COUNT(syscalls, "openat");
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    return resolve_openat()(dir, path, flags, mode);
}

// MARK: the process-callback window on the watched thread (libpipewire's stream buffer calls)

struct pw_stream;
struct pw_buffer;

NEXT(struct pw_buffer *, pw_stream_dequeue_buffer, (struct pw_stream *))
struct pw_buffer *pw_stream_dequeue_buffer(struct pw_stream *stream) {
    struct pw_buffer *buffer = resolve_pw_stream_dequeue_buffer()(stream);
    if (buffer) {
        in_callback = 1;
        if (is_watched()) atomic_fetch_add_explicit(&watched_callback_counts.callbacks, 1, memory_order_relaxed);
    }
    return buffer;
}

NEXT(int, pw_stream_queue_buffer, (struct pw_stream *, struct pw_buffer *))
int pw_stream_queue_buffer(struct pw_stream *stream, struct pw_buffer *buffer) {
    in_callback = 0;
    return resolve_pw_stream_queue_buffer()(stream, buffer);
}

__attribute__((constructor)) static void resolve_all(void) {
    resolve_pthread_mutex_lock();
    resolve_pthread_mutex_trylock();
    resolve_pthread_mutex_timedlock();
    resolve_pthread_rwlock_rdlock();
    resolve_pthread_rwlock_wrlock();
    resolve_pthread_rwlock_tryrdlock();
    resolve_pthread_rwlock_trywrlock();
    resolve_pthread_spin_lock();
    resolve_pthread_cond_wait();
    resolve_pthread_cond_timedwait();
    resolve_sem_wait();
    resolve_sem_timedwait();
    resolve_syscall();
    resolve_read();
    resolve_write();
    resolve_readv();
    resolve_writev();
    resolve_pread64();
    resolve_pwrite64();
    resolve_recv();
    resolve_send();
    resolve_recvmsg();
    resolve_sendmsg();
    resolve_close();
    resolve_poll();
    resolve_ppoll();
    resolve_select();
    resolve_epoll_wait();
    resolve_epoll_pwait();
    resolve_eventfd_read();
    resolve_eventfd_write();
    resolve_clock_gettime();
    resolve_gettimeofday();
    resolve_time();
    resolve_nanosleep();
    resolve_clock_nanosleep();
    resolve_usleep();
    resolve_sleep();
    resolve_sched_yield();
    resolve_mmap();
    resolve_munmap();
    resolve_mprotect();
    resolve_madvise();
    resolve_getpid();
    resolve_gettid();
    resolve_getrandom();
    resolve_sem_post();
    resolve_pthread_cond_signal();
    resolve_pthread_cond_broadcast();
    resolve_ioctl();
    resolve_open();
    resolve_openat();
    resolve_pw_stream_dequeue_buffer();
    resolve_pw_stream_queue_buffer();
}

#endif // CREALTIMEPROBE_SANITIZED
