// Misuses the C API the ways a host can by mistake, under AddressSanitizer (Scripts/test): every
// misuse must return its error code, none may crash, corrupt memory or leak. Prints what it checked;
// exits 1 at the first call that returned something else than it should.
#define _POSIX_C_SOURCE 200809L
#include <sharedsession.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long milliseconds) {
    struct timespec interval = {milliseconds / 1000, (milliseconds % 1000) * 1000000L};
    nanosleep(&interval, NULL);
}

static int checks = 0;

static void expect(sharedsession_status got, sharedsession_status wanted, const char *what) {
    checks++;
    if (got != wanted) {
        fprintf(stderr, "abuse: %s returned %d, not %d (%s)\n", what, (int)got, (int)wanted,
                sharedsession_last_error_message());
        exit(1);
    }
    if (wanted != sharedsession_statusOk && sharedsession_last_error_message()[0] == '\0') {
        fprintf(stderr, "abuse: %s failed with no message\n", what);
        exit(1);
    }
}

static uint64_t start(void) {
    uint64_t session = 0;
    expect(sharedsession_start(sharedsession_engineOffline, "abuse", &session), sharedsession_statusOk, "start");
    return session;
}

// Each of 8 threads takes and gives back leases and ducks, reads the snapshot, while the main thread
// closes the session under them: every call returns ok, or invalidHandle once the session is gone
// (sessionClosed for a call that reached the session as it closed).
static uint64_t shared_session;
static atomic_int other_statuses;
static atomic_int stale_statuses;

static void tally(sharedsession_status status) {
    if (status == sharedsession_statusInvalidHandle || status == sharedsession_statusSessionClosed)
        atomic_fetch_add(&stale_statuses, 1);
    else if (status != sharedsession_statusOk) atomic_fetch_add(&other_statuses, 1);
}

static void *hammer(void *argument) {
    (void)argument;
    for (int i = 0; i < 300; i++) {
        uint64_t lease = 0, duck = 0;
        char *text = NULL;
        sharedsession_status status = sharedsession_acquire(shared_session, i % 2 ? sharedsession_lease_typeVoice
                                                                                  : sharedsession_lease_typeGeneric,
                                                            "hammer", &lease);
        tally(status);
        tally(sharedsession_duck(shared_session, "hammer", 0.2f, &duck));
        tally(sharedsession_snapshot_text(shared_session, &text));
        if (text) tally(sharedsession_free(text));
        tally(sharedsession_set_main_volume(shared_session, 0.5f));
        if (lease) tally(sharedsession_release(lease));
        if (duck) tally(sharedsession_release(duck));
    }
    return NULL;
}

// A callback that calls back into the library: reads the gains and the snapshot, and on the first
// duck releases the session it is called for, from the library's own event thread.
static atomic_int callback_calls;
static atomic_int callback_released;

static void reenter(uint64_t session, const char *json, void *context) {
    (void)context;
    atomic_fetch_add(&callback_calls, 1);
    float gain = 0;
    char *text = NULL;
    if (sharedsession_gains(session, NULL, NULL, &gain, NULL) == sharedsession_statusOk &&
        sharedsession_snapshot_json(session, &text) == sharedsession_statusOk)
        sharedsession_free(text);
    if (strstr(json, "duck") && !atomic_exchange(&callback_released, 1)) {
        if (sharedsession_release(session) != sharedsession_statusOk) atomic_store(&callback_released, 2);
    }
}

int main(void) {
    uint64_t handle = 0;
    char *text = NULL;

    // NULL and zero handles, NULL pointers, values out of range.
    expect(sharedsession_release(0), sharedsession_statusInvalidHandle, "release(0)");
    expect(sharedsession_acquire(0, sharedsession_lease_typeGeneric, "x", &handle), sharedsession_statusInvalidHandle,
           "acquire on handle 0");
    expect(sharedsession_start(sharedsession_engineOffline, "abuse", NULL), sharedsession_statusInvalidArgument,
           "start with a NULL out pointer");
    expect(sharedsession_start(sharedsession_engineOffline, NULL, &handle), sharedsession_statusInvalidArgument,
           "start with a NULL name");
    expect(sharedsession_free((char *)"not ours"), sharedsession_statusInvalidArgument, "free of a foreign pointer");
    expect(sharedsession_free(NULL), sharedsession_statusOk, "free(NULL)");

    uint64_t session = start();
    expect(sharedsession_acquire(session, sharedsession_lease_typeGeneric, NULL, &handle),
           sharedsession_statusInvalidArgument, "acquire with a NULL owner");
    expect(sharedsession_acquire(session, sharedsession_lease_typeGeneric, "x", NULL),
           sharedsession_statusInvalidArgument, "acquire with a NULL out pointer");
    expect(sharedsession_set_main_volume(session, 2.0f), sharedsession_statusInvalidValue, "volume 2");
    expect(sharedsession_duck(session, "x", 5.0f, &handle), sharedsession_statusInvalidValue, "duck level 5");
    expect(sharedsession_render(session, -5, NULL), sharedsession_statusInvalidArgument, "render -5 ms");
    expect(sharedsession_open_main_media(session, "/nonexistent.mkv", &handle), sharedsession_statusFileError,
           "open a missing file");
    expect(sharedsession_adopt_main(session, 0, NULL, &handle), sharedsession_statusInvalidArgument,
           "adopt with no rule");
    expect(sharedsession_adopt_main(session, 1, NULL, &handle), sharedsession_statusNeedsPipeWire,
           "adopt on the offline engine");
    expect(sharedsession_handle_event(session, 99), sharedsession_statusInvalidArgument,
           "an event number that does not exist");

    // The platform's events and a route change, as a host passes them; NULL outputs are allowed there.
    expect(sharedsession_handle_event(session, sharedsession_platform_eventInterruptionBegan), sharedsession_statusOk,
           "interruption began");
    expect(sharedsession_handle_event(session, sharedsession_platform_eventInterruptionEndedResume),
           sharedsession_statusOk, "interruption ended");
    expect(sharedsession_route_changed(session, "newDeviceAvailable", NULL, "headphones"), sharedsession_statusOk,
           "route changed");
    expect(sharedsession_route_changed(session, NULL, NULL, NULL), sharedsession_statusInvalidArgument,
           "route changed with no reason");

    // Double release, the wrong kind of handle, a string freed twice.
    uint64_t lease = 0, duck = 0;
    expect(sharedsession_acquire(session, sharedsession_lease_typeVoice, "unit", &lease), sharedsession_statusOk,
           "acquire");
    expect(sharedsession_duck(session, "unit", -1, &duck), sharedsession_statusOk, "duck");
    expect(sharedsession_acquire(lease, sharedsession_lease_typeGeneric, "x", &handle),
           sharedsession_statusWrongHandleKind, "a lease used as a session");
    expect(sharedsession_release(lease), sharedsession_statusOk, "release");
    expect(sharedsession_release(lease), sharedsession_statusInvalidHandle, "release twice");
    expect(sharedsession_snapshot_text(session, &text), sharedsession_statusOk, "snapshot");
    expect(sharedsession_free(text), sharedsession_statusOk, "free");
    expect(sharedsession_free(text), sharedsession_statusInvalidArgument, "free twice");

    // Handles of a closed session.
    expect(sharedsession_release(session), sharedsession_statusOk, "close");
    expect(sharedsession_release(duck), sharedsession_statusInvalidHandle, "release a duck of a closed session");
    expect(sharedsession_acquire(session, sharedsession_lease_typeGeneric, "x", &handle),
           sharedsession_statusInvalidHandle, "acquire on a closed session");
    expect(sharedsession_release(session), sharedsession_statusInvalidHandle, "close twice");
    printf("abuse: misuses: %d checks, each its error code\n", checks);

    // 8 threads, and the session closed under them.
    shared_session = start();
    pthread_t threads[8];
    for (int i = 0; i < 8; i++) pthread_create(&threads[i], NULL, hammer, NULL);
    sleep_ms(50);
    expect(sharedsession_release(shared_session), sharedsession_statusOk, "close under 8 threads");
    for (int i = 0; i < 8; i++) pthread_join(threads[i], NULL);
    printf("abuse: 8 threads: %d calls refused as stale after the close, %d other errors\n",
           atomic_load(&stale_statuses), atomic_load(&other_statuses));
    if (atomic_load(&other_statuses) != 0) return 1;

    // The callback calls back in, and releases its own session.
    session = start();
    expect(sharedsession_set_event_callback(session, reenter, NULL), sharedsession_statusOk, "callback");
    // The callback may release the session before the duck call has filed its handle: the call then
    // returns sessionClosed, as any call that reaches a session as it closes does.
    duck = 0;
    sharedsession_status ducked = sharedsession_duck(session, "unit", 0.1f, &duck);
    if (ducked != sharedsession_statusOk) expect(ducked, sharedsession_statusSessionClosed, "duck as the callback closes");
    for (int i = 0; i < 500 && atomic_load(&callback_released) == 0; i++) sleep_ms(10);
    sleep_ms(100);
    if (atomic_load(&callback_released) != 1) {
        fprintf(stderr, "abuse: the callback could not release its session (%d)\n", atomic_load(&callback_released));
        return 1;
    }
    expect(sharedsession_release(session), sharedsession_statusInvalidHandle, "close after the callback closed it");
    expect(sharedsession_release(duck), sharedsession_statusInvalidHandle, "duck of the session the callback closed");
    printf("abuse: the callback ran %d times, called back in, and closed its session\n", atomic_load(&callback_calls));
    printf("abuse: %d checks passed\n", checks);
    return 0;
}
