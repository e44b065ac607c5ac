// The adoption watchdog (watchdog.c): a process of its own that gives adopted nodes (other clients'
// players the engine ducks) their own volume back when the engine's process ends without doing so.
// It is this same executable run again: a constructor in watchdog.c takes over before `main` when the
// environment says so. That constructor sits in the same object file as CAdoptionWatchdog_spawn, so
// every program that can start the watchdog also links the code that runs it.
#ifndef CADOPTIONWATCHDOG_H
#define CADOPTIONWATCHDOG_H

#include <stddef.h>
#include <sys/types.h>

/// Starts the watchdog connected to the daemon `remoteName` (NULL: PipeWire's default) and waits for it
/// to say it runs. Returns its pid and sets `commandFD` (the write end of its command pipe,
/// non-blocking, close-on-exec), or returns -1 with the reason in `failure`.
pid_t CAdoptionWatchdog_spawn(const char *remoteName, const char *mediaCategory, int *commandFD, char *failure,
                              size_t failureSize);
/// Sends one command line ("adopt ID VOLUME\n", "release ID\n"). Returns 0 or a negative errno.
int CAdoptionWatchdog_send(int commandFD, const char *line);
/// Closes the command pipe (the watchdog gives back what it still holds and exits) and reaps it.
void CAdoptionWatchdog_stop(pid_t pid, int commandFD);

#endif
