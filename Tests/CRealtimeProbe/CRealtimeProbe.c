// Counts allocations, locks and syscall() calls made on chosen threads, by defining the libc
// entry points in the test executable itself: ELF symbol lookup finds the executable's definitions
// first, so every shared library (the Swift runtime, libpipewire) calls these. Each wrapper forwards
// to glibc's own implementation and counts only on an armed or watched thread, so tests running in
// parallel on other threads do not disturb a measurement. Armed threads and the watched thread have
// counters of their own, so a test that arms its thread and one that watches an engine's data
// thread can run at the same time without reading or resetting each other's counts.
#define _GNU_SOURCE
#include "CRealtimeProbe.h"

#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static __thread int armed __attribute__((tls_model("initial-exec")));
// An armed thread's counts are its own, so tests measuring on different threads at the same time
// (Swift Testing runs them in parallel) never add to each other's.
static __thread int64_t allocations __attribute__((tls_model("initial-exec")));
static __thread int64_t frees __attribute__((tls_model("initial-exec")));
static __thread int64_t locks __attribute__((tls_model("initial-exec")));
static __thread int64_t syscalls __attribute__((tls_model("initial-exec")));
static _Atomic(pthread_t) watched;
static _Atomic int watching;
static _Atomic int64_t watched_allocations, watched_frees, watched_locks, watched_syscalls;

static inline int is_watched(void) {
    return atomic_load_explicit(&watching, memory_order_relaxed)
        && pthread_equal(pthread_self(), atomic_load_explicit(&watched, memory_order_relaxed));
}

#define COUNT(counter) do { \
        if (armed) counter += 1; \
        else if (is_watched()) atomic_fetch_add_explicit(&watched_##counter, 1, memory_order_relaxed); \
    } while (0)

void CRealtimeProbe_armCurrentThread(void) { armed = 1; }
void CRealtimeProbe_disarmCurrentThread(void) { armed = 0; }
void CRealtimeProbe_watchThread(pthread_t thread) {
    atomic_store(&watched, thread);
    atomic_store(&watching, 1);
}
void CRealtimeProbe_unwatch(void) { atomic_store(&watching, 0); }
pthread_t CRealtimeProbe_currentThread(void) { return pthread_self(); }

void CRealtimeProbe_reset(void) {
    allocations = 0;
    frees = 0;
    locks = 0;
    syscalls = 0;
}

CRealtimeProbe_Counts CRealtimeProbe_read(void) {
    CRealtimeProbe_Counts counts = {allocations, frees, locks, syscalls};
    return counts;
}

void CRealtimeProbe_resetWatched(void) {
    atomic_store(&watched_allocations, 0);
    atomic_store(&watched_frees, 0);
    atomic_store(&watched_locks, 0);
    atomic_store(&watched_syscalls, 0);
}

CRealtimeProbe_Counts CRealtimeProbe_readWatched(void) {
    CRealtimeProbe_Counts counts = {
        atomic_load(&watched_allocations), atomic_load(&watched_frees), atomic_load(&watched_locks),
        atomic_load(&watched_syscalls)};
    return counts;
}

int CRealtimeProbe_isInterposing(void) {
    int64_t before = allocations;
    int was = armed;
    armed = 1;
    void *volatile p = malloc(24);
    armed = was;
    free(p);
    return allocations > before;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CREALTIMEPROBE_SANITIZED 1
#endif
#endif

// Under a sanitizer its runtime owns these symbols; the probe steps aside and reports that it is
// not interposing, and the tests that need it say so and skip.
#ifndef CREALTIMEPROBE_SANITIZED

// MARK: allocation

void *malloc(size_t size) { COUNT(allocations); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { COUNT(allocations); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { COUNT(allocations); return __libc_realloc(p, size); }
void free(void *p) { if (p) COUNT(frees); __libc_free(p); }
void *memalign(size_t alignment, size_t size) { COUNT(allocations); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { COUNT(allocations); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    COUNT(allocations);
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

// MARK: locks and syscall(), forwarded through the next definition in lookup order

#define FORWARD(ret, name, params, args) \
    ret name params { \
        static ret (*next) params; \
        if (!next) next = (ret (*) params)dlsym(RTLD_NEXT, #name); \
        COUNT(locks); \
        return next args; \
    }

FORWARD(int, pthread_mutex_lock, (pthread_mutex_t *m), (m))
FORWARD(int, pthread_mutex_trylock, (pthread_mutex_t *m), (m))
FORWARD(int, pthread_rwlock_rdlock, (pthread_rwlock_t *l), (l))
FORWARD(int, pthread_rwlock_wrlock, (pthread_rwlock_t *l), (l))
FORWARD(int, pthread_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
FORWARD(int, sem_wait, (sem_t *s), (s))

long syscall(long number, ...) {
    static long (*next)(long, ...);
    if (!next) next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    COUNT(syscalls);
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    return next(number, a, b, c, d, e, f);
}

#endif // CREALTIMEPROBE_SANITIZED
