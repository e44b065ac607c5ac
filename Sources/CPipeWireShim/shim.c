#include "CPipeWireShim.h"
int CPipeWireShim_scaffold(void) { return 0; }
