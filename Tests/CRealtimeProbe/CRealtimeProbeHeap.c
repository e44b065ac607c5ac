// The heap in use, for the tests that bound what an object costs (a stream's bytes): Swift cannot
// reach mallinfo2, which Glibc's module map leaves out. It reads glibc's own arena statistics, which
// the probe's malloc wrappers keep exact since they hand every call to glibc's allocator.
#include "CRealtimeProbe.h"

#include <malloc.h>

size_t CRealtimeProbe_heapInUse(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
