// The probe's positive controls: for every function CRealtimeProbe.c wraps, one call of it on an armed
// thread, with everything the call needs set up (and torn down) outside the armed window. A test runs
// each and checks that exactly that call was counted, in the right counter, and named
// (RealtimeRenderTests); another checks that every wrapper in CRealtimeProbe.c has its control here.
//
// Each call goes through a volatile function pointer: the compiler can neither drop it (an unused
// malloc) nor turn it into another function (printf("x") into putchar('x')), and the pointer is the
// address the dynamic linker gives every caller, the probe's definition.
#define _GNU_SOURCE
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include "CRealtimeProbe.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

// glibc's fortified entry points, declared only in a _FORTIFY_SOURCE build.
extern int __printf_chk(int, const char *, ...);
extern int __fprintf_chk(FILE *, int, const char *, ...);
extern int __dprintf_chk(int, int, const char *, ...);
extern int __vprintf_chk(int, const char *, va_list);
extern int __vfprintf_chk(FILE *, int, const char *, va_list);
extern int __vdprintf_chk(int, int, const char *, va_list);

enum { ALLOCATIONS = 0, FREES = 1, LOCKS = 2, SYSCALLS = 3 };

typedef struct {
    const char *name;
    int counter;
} Control;

static const Control controls[] = {
    {"malloc", ALLOCATIONS}, {"calloc", ALLOCATIONS}, {"realloc", ALLOCATIONS}, {"free", FREES},
    {"memalign", ALLOCATIONS}, {"aligned_alloc", ALLOCATIONS}, {"posix_memalign", ALLOCATIONS},

    {"pthread_mutex_lock", LOCKS}, {"pthread_mutex_trylock", LOCKS}, {"pthread_mutex_timedlock", LOCKS},
    {"pthread_rwlock_rdlock", LOCKS}, {"pthread_rwlock_wrlock", LOCKS}, {"pthread_rwlock_tryrdlock", LOCKS},
    {"pthread_rwlock_trywrlock", LOCKS}, {"pthread_spin_lock", LOCKS}, {"pthread_cond_wait", LOCKS},
    {"pthread_cond_timedwait", LOCKS}, {"sem_wait", LOCKS}, {"sem_timedwait", LOCKS}, {"flockfile", LOCKS},
    {"ftrylockfile", LOCKS},

    {"syscall", SYSCALLS}, {"read", SYSCALLS}, {"write", SYSCALLS}, {"readv", SYSCALLS}, {"writev", SYSCALLS},
    {"pread64", SYSCALLS}, {"pwrite64", SYSCALLS}, {"recv", SYSCALLS}, {"send", SYSCALLS},
    {"recvmsg", SYSCALLS}, {"sendmsg", SYSCALLS}, {"close", SYSCALLS}, {"poll", SYSCALLS}, {"ppoll", SYSCALLS},
    {"select", SYSCALLS}, {"epoll_wait", SYSCALLS}, {"epoll_pwait", SYSCALLS}, {"eventfd_read", SYSCALLS},
    {"eventfd_write", SYSCALLS}, {"clock_gettime", SYSCALLS}, {"gettimeofday", SYSCALLS}, {"time", SYSCALLS},
    {"nanosleep", SYSCALLS}, {"clock_nanosleep", SYSCALLS}, {"usleep", SYSCALLS}, {"sleep", SYSCALLS},
    {"sched_yield", SYSCALLS}, {"mmap", SYSCALLS}, {"munmap", SYSCALLS}, {"mprotect", SYSCALLS},
    {"madvise", SYSCALLS}, {"getpid", SYSCALLS}, {"gettid", SYSCALLS}, {"getrandom", SYSCALLS},
    {"sem_post", SYSCALLS}, {"pthread_cond_signal", SYSCALLS}, {"pthread_cond_broadcast", SYSCALLS},
    {"ioctl", SYSCALLS}, {"open", SYSCALLS}, {"openat", SYSCALLS},

    {"printf", SYSCALLS}, {"fprintf", SYSCALLS}, {"dprintf", SYSCALLS}, {"vprintf", SYSCALLS},
    {"vfprintf", SYSCALLS}, {"vdprintf", SYSCALLS}, {"__printf_chk", SYSCALLS}, {"__fprintf_chk", SYSCALLS},
    {"__dprintf_chk", SYSCALLS}, {"__vprintf_chk", SYSCALLS}, {"__vfprintf_chk", SYSCALLS},
    {"__vdprintf_chk", SYSCALLS}, {"fwrite", SYSCALLS}, {"fwrite_unlocked", SYSCALLS}, {"fputs", SYSCALLS},
    {"fputs_unlocked", SYSCALLS}, {"fputc", SYSCALLS}, {"putc", SYSCALLS}, {"putchar", SYSCALLS},
    {"puts", SYSCALLS}, {"fflush", SYSCALLS}, {"fflush_unlocked", SYSCALLS},
};

enum { CONTROL_COUNT = (int)(sizeof controls / sizeof controls[0]) };

int CRealtimeProbe_controlCount(void) { return CONTROL_COUNT; }
const char *CRealtimeProbe_controlName(int index) {
    return index >= 0 && index < CONTROL_COUNT ? controls[index].name : "";
}

int CRealtimeProbe_controlCounter(int index) {
    return index >= 0 && index < CONTROL_COUNT ? controls[index].counter : -1;
}

/// What the calls need, made before the thread is armed.
typedef struct {
    int null_fd, sockets[2], epoll_fd, event_fd;
    FILE *null_file;
    char file_buffer[4096];
    pthread_mutex_t mutex;
    pthread_rwlock_t rwlock;
    pthread_spinlock_t spin;
    pthread_cond_t cond;
    sem_t sem;
    void *page;
    int flag;
} Fixtures;

static int set_up(Fixtures *f) {
    memset(f, 0, sizeof *f);
    f->null_fd = open("/dev/null", O_RDWR);
    if (f->null_fd < 0) return -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, f->sockets) != 0) return -1;
    // Something to receive, so recv and recvmsg return at once with data.
    if (send(f->sockets[1], "xy", 2, 0) != 2) return -1;
    f->epoll_fd = epoll_create1(0);
    f->event_fd = eventfd(1, EFD_NONBLOCK);
    if (f->epoll_fd < 0 || f->event_fd < 0) return -1;
    // Fully buffered with a buffer of its own: a write to it stays in the buffer, no write(2) at all.
    f->null_file = fopen("/dev/null", "w");
    if (!f->null_file || setvbuf(f->null_file, f->file_buffer, _IOFBF, sizeof f->file_buffer) != 0) return -1;
    pthread_mutex_init(&f->mutex, NULL);
    pthread_rwlock_init(&f->rwlock, NULL);
    pthread_spin_init(&f->spin, PTHREAD_PROCESS_PRIVATE);
    pthread_cond_init(&f->cond, NULL);
    sem_init(&f->sem, 0, 1);
    f->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return f->page == MAP_FAILED ? -1 : 0;
}

static void tear_down(Fixtures *f) {
    fclose(f->null_file);
    close(f->null_fd);
    close(f->sockets[0]);
    close(f->sockets[1]);
    close(f->epoll_fd);
    close(f->event_fd);
    pthread_mutex_destroy(&f->mutex);
    pthread_rwlock_destroy(&f->rwlock);
    pthread_spin_destroy(&f->spin);
    pthread_cond_destroy(&f->cond);
    sem_destroy(&f->sem);
    if (f->page != MAP_FAILED) munmap(f->page, 4096);
}

#define ARM() do { CRealtimeProbe_reset(); CRealtimeProbe_armCurrentThread(); } while (0)
#define DISARM() CRealtimeProbe_disarmCurrentThread()
/// Calls `function` (through a volatile pointer of its own type) once, armed.
#define CALL(type, function, ...) do { \
        __typeof__(type) volatile pointer = function; \
        ARM(); \
        pointer(__VA_ARGS__); \
        DISARM(); \
    } while (0)

static void *volatile kept;

static void *signal_after_wait(void *raw) {
    Fixtures *f = raw;
    pthread_mutex_lock(&f->mutex);  // taken only once the armed thread waits (which releases it)
    f->flag = 1;
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->mutex);
    return NULL;
}

static void call_v(int which, Fixtures *f, ...) {
    va_list ap;
    va_start(ap, f);
    switch (which) {
    case 0: CALL(int (*)(const char *, va_list), vprintf, "", ap); break;
    case 1: CALL(int (*)(FILE *, const char *, va_list), vfprintf, f->null_file, "%d", ap); break;
    case 2: CALL(int (*)(int, const char *, va_list), vdprintf, f->null_fd, "%d", ap); break;
    case 3: CALL(int (*)(int, const char *, va_list), __vprintf_chk, 1, "", ap); break;
    case 4: CALL(int (*)(FILE *, int, const char *, va_list), __vfprintf_chk, f->null_file, 1, "%d", ap); break;
    case 5: CALL(int (*)(int, int, const char *, va_list), __vdprintf_chk, f->null_fd, 1, "%d", ap); break;
    }
    va_end(ap);
}

static int run(const char *name, Fixtures *f) {
#define IS(n) (strcmp(name, n) == 0)
    struct timespec zero = {0, 0}, tiny = {0, 1}, now;
    struct timeval tv_zero = {0, 0}, tv;
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pollfd pfd = {f->null_fd, POLLOUT, 0};
    struct epoll_event events[1];
    eventfd_t value;
    int available;

    // Allocation
    if (IS("malloc")) { CALL(void *(*)(size_t), malloc, 24); kept = 0; }
    else if (IS("calloc")) {
        void *(*volatile p)(size_t, size_t) = calloc;
        ARM();
        kept = p(3, 8);
        DISARM();
        free(kept);
    }
    else if (IS("realloc")) {
        void *old = malloc(8);
        void *(*volatile p)(void *, size_t) = realloc;
        ARM(); kept = p(old, 4096); DISARM();
        free(kept);
    }
    else if (IS("free")) { void *block = malloc(24); CALL(void (*)(void *), free, block); }
    else if (IS("memalign")) {
        void *(*volatile p)(size_t, size_t) = memalign;
        ARM();
        kept = p(64, 64);
        DISARM();
        free(kept);
    }
    else if (IS("aligned_alloc")) {
        void *(*volatile p)(size_t, size_t) = aligned_alloc;
        ARM(); kept = p(64, 64); DISARM();
        free(kept);
    }
    else if (IS("posix_memalign")) {
        void *block = NULL;
        CALL(int (*)(void **, size_t, size_t), posix_memalign, &block, 64, 64);
        free(block);
    }
    // Locks (each uncontended but the condition wait, which another thread ends)
    else if (IS("pthread_mutex_lock")) {
        CALL(int (*)(pthread_mutex_t *), pthread_mutex_lock, &f->mutex);
        pthread_mutex_unlock(&f->mutex);
    }
    else if (IS("pthread_mutex_trylock")) {
        CALL(int (*)(pthread_mutex_t *), pthread_mutex_trylock, &f->mutex);
        pthread_mutex_unlock(&f->mutex);
    }
    else if (IS("pthread_mutex_timedlock")) {
        clock_gettime(CLOCK_REALTIME, &now);
        now.tv_sec += 5;
        CALL(int (*)(pthread_mutex_t *, const struct timespec *), pthread_mutex_timedlock, &f->mutex, &now);
        pthread_mutex_unlock(&f->mutex);
    }
    else if (IS("pthread_rwlock_rdlock")) {
        CALL(int (*)(pthread_rwlock_t *), pthread_rwlock_rdlock, &f->rwlock);
        pthread_rwlock_unlock(&f->rwlock);
    }
    else if (IS("pthread_rwlock_wrlock")) {
        CALL(int (*)(pthread_rwlock_t *), pthread_rwlock_wrlock, &f->rwlock);
        pthread_rwlock_unlock(&f->rwlock);
    }
    else if (IS("pthread_rwlock_tryrdlock")) {
        CALL(int (*)(pthread_rwlock_t *), pthread_rwlock_tryrdlock, &f->rwlock);
        pthread_rwlock_unlock(&f->rwlock);
    }
    else if (IS("pthread_rwlock_trywrlock")) {
        CALL(int (*)(pthread_rwlock_t *), pthread_rwlock_trywrlock, &f->rwlock);
        pthread_rwlock_unlock(&f->rwlock);
    }
    else if (IS("pthread_spin_lock")) {
        CALL(int (*)(pthread_spinlock_t *), pthread_spin_lock, &f->spin);
        pthread_spin_unlock(&f->spin);
    }
    else if (IS("pthread_cond_wait")) {
        pthread_t thread;
        pthread_mutex_lock(&f->mutex);
        if (pthread_create(&thread, NULL, signal_after_wait, f) != 0) { pthread_mutex_unlock(&f->mutex); return -1; }
        int (*volatile p)(pthread_cond_t *, pthread_mutex_t *) = pthread_cond_wait;
        ARM();
        while (!f->flag) p(&f->cond, &f->mutex);
        DISARM();
        pthread_mutex_unlock(&f->mutex);
        pthread_join(thread, NULL);
    }
    else if (IS("pthread_cond_timedwait")) {
        pthread_mutex_lock(&f->mutex);
        // A deadline already past: the wait times out at once.
        CALL(int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *), pthread_cond_timedwait,
            &f->cond, &f->mutex, &zero);
        pthread_mutex_unlock(&f->mutex);
    }
    else if (IS("sem_wait")) { CALL(int (*)(sem_t *), sem_wait, &f->sem); }
    else if (IS("sem_timedwait")) {
        clock_gettime(CLOCK_REALTIME, &now);
        now.tv_sec += 5;
        CALL(int (*)(sem_t *, const struct timespec *), sem_timedwait, &f->sem, &now);
    }
    else if (IS("flockfile")) { CALL(void (*)(FILE *), flockfile, f->null_file); funlockfile(f->null_file); }
    else if (IS("ftrylockfile")) { CALL(int (*)(FILE *), ftrylockfile, f->null_file); funlockfile(f->null_file); }
    // System calls
    else if (IS("syscall")) { CALL(long (*)(long, ...), syscall, (long)SYS_getppid); }
    else if (IS("read")) { CALL(ssize_t (*)(int, void *, size_t), read, f->null_fd, &byte, 1); }
    else if (IS("write")) { CALL(ssize_t (*)(int, const void *, size_t), write, f->null_fd, &byte, 1); }
    else if (IS("readv")) { CALL(ssize_t (*)(int, const struct iovec *, int), readv, f->null_fd, &iov, 1); }
    else if (IS("writev")) { CALL(ssize_t (*)(int, const struct iovec *, int), writev, f->null_fd, &iov, 1); }
    else if (IS("pread64")) { CALL(ssize_t (*)(int, void *, size_t, off_t), pread64, f->null_fd, &byte, 1, 0); }
    else if (IS("pwrite64")) { CALL(ssize_t (*)(int, const void *, size_t, off_t), pwrite64, f->null_fd, &byte, 1, 0); }
    else if (IS("recv")) { CALL(ssize_t (*)(int, void *, size_t, int), recv, f->sockets[0], &byte, 1, 0); }
    else if (IS("send")) { CALL(ssize_t (*)(int, const void *, size_t, int), send, f->sockets[0], &byte, 1, 0); }
    else if (IS("recvmsg")) { CALL(ssize_t (*)(int, struct msghdr *, int), recvmsg, f->sockets[0], &message, 0); }
    else if (IS("sendmsg")) { CALL(ssize_t (*)(int, const struct msghdr *, int), sendmsg, f->sockets[0], &message, 0); }
    else if (IS("close")) { int copy = dup(f->null_fd); CALL(int (*)(int), close, copy); }
    else if (IS("poll")) { CALL(int (*)(struct pollfd *, nfds_t, int), poll, &pfd, 1, 0); }
    else if (IS("ppoll")) {
        CALL(int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *), ppoll, &pfd, 1, &zero, NULL);
    }
    else if (IS("select")) {
        CALL(int (*)(int, fd_set *, fd_set *, fd_set *, struct timeval *), select, 0, NULL, NULL, NULL, &tv_zero);
    }
    else if (IS("epoll_wait")) {
        CALL(int (*)(int, struct epoll_event *, int, int), epoll_wait, f->epoll_fd, events, 1, 0);
    }
    else if (IS("epoll_pwait")) {
        CALL(int (*)(int, struct epoll_event *, int, int, const sigset_t *), epoll_pwait, f->epoll_fd, events,
            1, 0, NULL);
    }
    else if (IS("eventfd_read")) { CALL(int (*)(int, eventfd_t *), eventfd_read, f->event_fd, &value); }
    else if (IS("eventfd_write")) { CALL(int (*)(int, eventfd_t), eventfd_write, f->event_fd, 1); }
    else if (IS("clock_gettime")) { CALL(int (*)(clockid_t, struct timespec *), clock_gettime, CLOCK_MONOTONIC, &now); }
    else if (IS("gettimeofday")) { CALL(int (*)(struct timeval *, void *), gettimeofday, &tv, NULL); }
    else if (IS("time")) { CALL(time_t (*)(time_t *), time, NULL); }
    else if (IS("nanosleep")) { CALL(int (*)(const struct timespec *, struct timespec *), nanosleep, &tiny, NULL); }
    else if (IS("clock_nanosleep")) {
        CALL(int (*)(clockid_t, int, const struct timespec *, struct timespec *), clock_nanosleep, CLOCK_MONOTONIC, 0,
            &tiny, NULL);
    }
    else if (IS("usleep")) { CALL(int (*)(useconds_t), usleep, 1); }
    else if (IS("sleep")) { CALL(unsigned int (*)(unsigned int), sleep, 0); }
    else if (IS("sched_yield")) { CALL(int (*)(void), sched_yield); }
    else if (IS("mmap")) {
        void *(*volatile p)(void *, size_t, int, int, int, off_t) = mmap;
        ARM(); kept = p(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); DISARM();
        if (kept != MAP_FAILED) munmap(kept, 4096);
    }
    else if (IS("munmap")) {
        CALL(int (*)(void *, size_t), munmap, f->page, 4096);
        f->page = MAP_FAILED;
    }
    else if (IS("mprotect")) { CALL(int (*)(void *, size_t, int), mprotect, f->page, 4096, PROT_READ | PROT_WRITE); }
    else if (IS("madvise")) { CALL(int (*)(void *, size_t, int), madvise, f->page, 4096, MADV_NORMAL); }
    else if (IS("getpid")) { CALL(pid_t (*)(void), getpid); }
    else if (IS("gettid")) { CALL(pid_t (*)(void), gettid); }
    else if (IS("getrandom")) { CALL(ssize_t (*)(void *, size_t, unsigned int), getrandom, &byte, 1, GRND_NONBLOCK); }
    else if (IS("sem_post")) { CALL(int (*)(sem_t *), sem_post, &f->sem); }
    else if (IS("pthread_cond_signal")) { CALL(int (*)(pthread_cond_t *), pthread_cond_signal, &f->cond); }
    else if (IS("pthread_cond_broadcast")) { CALL(int (*)(pthread_cond_t *), pthread_cond_broadcast, &f->cond); }
    else if (IS("ioctl")) {
        CALL(int (*)(int, unsigned long, ...), ioctl, f->sockets[0], (unsigned long)FIONREAD, &available);
    }
    else if (IS("open")) {
        int (*volatile p)(const char *, int, ...) = open;
        ARM(); int fd = p("/dev/null", O_RDONLY); DISARM();
        if (fd >= 0) close(fd);
    }
    else if (IS("openat")) {
        int (*volatile p)(int, const char *, int, ...) = openat;
        ARM(); int fd = p(AT_FDCWD, "/dev/null", O_RDONLY); DISARM();
        if (fd >= 0) close(fd);
    }
    // Buffered stdio writes: to the fully buffered /dev/null FILE (no write(2) happens), or stdout
    // with nothing (printf) or one newline (putchar, puts) to print.
    else if (IS("printf")) { CALL(int (*)(const char *, ...), printf, ""); }
    else if (IS("fprintf")) { CALL(int (*)(FILE *, const char *, ...), fprintf, f->null_file, "%d", 1); }
    else if (IS("dprintf")) { CALL(int (*)(int, const char *, ...), dprintf, f->null_fd, "%d", 1); }
    else if (IS("vprintf")) { call_v(0, f, 1); }
    else if (IS("vfprintf")) { call_v(1, f, 1); }
    else if (IS("vdprintf")) { call_v(2, f, 1); }
    else if (IS("__printf_chk")) { CALL(int (*)(int, const char *, ...), __printf_chk, 1, ""); }
    else if (IS("__fprintf_chk")) {
        CALL(int (*)(FILE *, int, const char *, ...), __fprintf_chk, f->null_file, 1, "%d", 1);
    }
    else if (IS("__dprintf_chk")) { CALL(int (*)(int, int, const char *, ...), __dprintf_chk, f->null_fd, 1, "%d", 1); }
    else if (IS("__vprintf_chk")) { call_v(3, f, 1); }
    else if (IS("__vfprintf_chk")) { call_v(4, f, 1); }
    else if (IS("__vdprintf_chk")) { call_v(5, f, 1); }
    else if (IS("fwrite")) { CALL(size_t (*)(const void *, size_t, size_t, FILE *), fwrite, "x", 1, 1, f->null_file); }
    else if (IS("fwrite_unlocked")) {
        flockfile(f->null_file);
        CALL(size_t (*)(const void *, size_t, size_t, FILE *), fwrite_unlocked, "x", 1, 1, f->null_file);
        funlockfile(f->null_file);
    }
    else if (IS("fputs")) { CALL(int (*)(const char *, FILE *), fputs, "x", f->null_file); }
    else if (IS("fputs_unlocked")) {
        flockfile(f->null_file);
        CALL(int (*)(const char *, FILE *), fputs_unlocked, "x", f->null_file);
        funlockfile(f->null_file);
    }
    else if (IS("fputc")) { CALL(int (*)(int, FILE *), fputc, 'x', f->null_file); }
    else if (IS("putc")) { CALL(int (*)(int, FILE *), putc, 'x', f->null_file); }
    else if (IS("putchar")) { CALL(int (*)(int), putchar, '\n'); }
    else if (IS("puts")) { CALL(int (*)(const char *), puts, ""); }
    else if (IS("fflush")) { fputc('x', f->null_file); CALL(int (*)(FILE *), fflush, f->null_file); }
    else if (IS("fflush_unlocked")) {
        flockfile(f->null_file);
        CALL(int (*)(FILE *), fflush_unlocked, f->null_file);
        funlockfile(f->null_file);
    }
    else return -1;
    return 0;
#undef IS
}

int CRealtimeProbe_runControl(int index) {
    if (index < 0 || index >= CONTROL_COUNT) return -1;
    Fixtures fixtures;
    int result = set_up(&fixtures);
    if (result == 0) result = run(controls[index].name, &fixtures);
    tear_down(&fixtures);
    return result;
}
