#ifndef CHEAP_H
#define CHEAP_H
#include <stddef.h>
/// Bytes of heap in use now, from glibc's mallinfo2 (arena plus mmapped blocks).
size_t cheap_in_use(void);
#endif
