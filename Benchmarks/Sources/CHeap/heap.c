#include "CHeap.h"
#include <malloc.h>

size_t cheap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
