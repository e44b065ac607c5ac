// The probe's wrappers of buffered stdio writes (see CRealtimeProbe.c for how the probe interposes).
#define _GNU_SOURCE
// These define stdio functions that glibc's headers also offer as inline functions in an optimized
// build (putchar, vprintf): without inlines the headers only declare them.
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include "CRealtimeProbeInternal.h"

#include <stdarg.h>
#include <stdio.h>

#ifndef CREALTIMEPROBE_SANITIZED

// MARK: buffered stdio writes: counted as system calls (each may flush with write(2), and each takes
// the FILE's lock), so a log line on the render path is seen even when the buffer absorbs it

NEXT(int, vfprintf, (FILE *, const char *, va_list))
NEXT(int, vdprintf, (int, const char *, va_list))
NEXT(int, __vfprintf_chk, (FILE *, int, const char *, va_list))
NEXT(int, __vdprintf_chk, (int, int, const char *, va_list))

int vfprintf(FILE *f, const char *format, va_list ap) {
    COUNT(syscalls, "vfprintf");
    return resolve_vfprintf()(f, format, ap);
}
int vprintf(const char *format, va_list ap) {
    COUNT(syscalls, "vprintf");
    return resolve_vfprintf()(stdout, format, ap);
}
int vdprintf(int fd, const char *format, va_list ap) {
    COUNT(syscalls, "vdprintf");
    return resolve_vdprintf()(fd, format, ap);
}
int printf(const char *format, ...) {
    COUNT(syscalls, "printf");
    va_list ap;
    va_start(ap, format);
    int result = resolve_vfprintf()(stdout, format, ap);
    va_end(ap);
    return result;
}
int fprintf(FILE *f, const char *format, ...) {
    COUNT(syscalls, "fprintf");
    va_list ap;
    va_start(ap, format);
    int result = resolve_vfprintf()(f, format, ap);
    va_end(ap);
    return result;
}
int dprintf(int fd, const char *format, ...) {
    COUNT(syscalls, "dprintf");
    va_list ap;
    va_start(ap, format);
    int result = resolve_vdprintf()(fd, format, ap);
    va_end(ap);
    return result;
}
// What code built with _FORTIFY_SOURCE (Debian's libraries) calls instead of the printf family.
int __vfprintf_chk(FILE *f, int flag, const char *format, va_list ap) {
    COUNT(syscalls, "__vfprintf_chk");
    return resolve___vfprintf_chk()(f, flag, format, ap);
}
int __vprintf_chk(int flag, const char *format, va_list ap) {
    COUNT(syscalls, "__vprintf_chk");
    return resolve___vfprintf_chk()(stdout, flag, format, ap);
}
int __vdprintf_chk(int fd, int flag, const char *format, va_list ap) {
    COUNT(syscalls, "__vdprintf_chk");
    return resolve___vdprintf_chk()(fd, flag, format, ap);
}
int __printf_chk(int flag, const char *format, ...) {
    COUNT(syscalls, "__printf_chk");
    va_list ap;
    va_start(ap, format);
    int result = resolve___vfprintf_chk()(stdout, flag, format, ap);
    va_end(ap);
    return result;
}
int __fprintf_chk(FILE *f, int flag, const char *format, ...) {
    COUNT(syscalls, "__fprintf_chk");
    va_list ap;
    va_start(ap, format);
    int result = resolve___vfprintf_chk()(f, flag, format, ap);
    va_end(ap);
    return result;
}
int __dprintf_chk(int fd, int flag, const char *format, ...) {
    COUNT(syscalls, "__dprintf_chk");
    va_list ap;
    va_start(ap, format);
    int result = resolve___vdprintf_chk()(fd, flag, format, ap);
    va_end(ap);
    return result;
}

FORWARD(syscalls, size_t, fwrite, (const void *p, size_t size, size_t n, FILE *f), (p, size, n, f))
FORWARD(syscalls, size_t, fwrite_unlocked, (const void *p, size_t size, size_t n, FILE *f), (p, size, n, f))
FORWARD(syscalls, int, fputs, (const char *text, FILE *f), (text, f))
FORWARD(syscalls, int, fputs_unlocked, (const char *text, FILE *f), (text, f))
FORWARD(syscalls, int, fputc, (int c, FILE *f), (c, f))
FORWARD(syscalls, int, putc, (int c, FILE *f), (c, f))
FORWARD(syscalls, int, putchar, (int c), (c))
FORWARD(syscalls, int, puts, (const char *text), (text))
FORWARD(syscalls, int, fflush, (FILE *f), (f))
FORWARD(syscalls, int, fflush_unlocked, (FILE *f), (f))
// The FILE's lock: Swift's print takes stdout's with flockfile around its writes.
NEXT(void, flockfile, (FILE *))
void flockfile(FILE *f) {
    COUNT(locks, "flockfile");
    resolve_flockfile()(f);
}
FORWARD(locks, int, ftrylockfile, (FILE *f), (f))

// Looked up before any test runs, as CRealtimeProbe.c does for its own.
__attribute__((constructor)) static void resolve_stdio(void) {
    resolve_vfprintf();
    resolve_vdprintf();
    resolve___vfprintf_chk();
    resolve___vdprintf_chk();
    resolve_fwrite();
    resolve_fwrite_unlocked();
    resolve_fputs();
    resolve_fputs_unlocked();
    resolve_fputc();
    resolve_putc();
    resolve_putchar();
    resolve_puts();
    resolve_fflush();
    resolve_fflush_unlocked();
    resolve_flockfile();
    resolve_ftrylockfile();
}

#endif // CREALTIMEPROBE_SANITIZED
