// Linked into the echo-churn helper only: widens the window in which libpipewire-module-echo-cancel's
// capture callback holds a dequeued buffer (see widener.c), so a teardown racing it is caught in a few
// cycles instead of one run in several.
#ifndef CECHORACEWIDENER_H
#define CECHORACEWIDENER_H

/// How many times the widener held a canceller capture buffer (0 when SHAREDSESSION_WIDEN_ECHO_RACE_US
/// is unset: the widener then only passes calls through).
unsigned long CEchoRaceWidener_holds(void);

#endif
