int CPipeWireShim_scaffold(void);
