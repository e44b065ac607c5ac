// A host in C: it plays a media file as the main stream and serves the session to a unit in another
// process, which ducks the movie and leaves; it checks that the movie came back.
//
//   PKG_CONFIG_PATH=$(Scripts/build-clib)/lib/pkgconfig
//   cc -std=c11 chost.c $(pkg-config --cflags --libs sharedsession) -o chost
//   ./chost [--engine offline|pipewire] MOVIE UNIT_COMMAND...
//
// The unit command gets `--socket PATH` appended and reads its commands on stdin, one a line, as the
// package's remote-unit does ("duck", then "leave"). Exit status 0 when the movie came back after the
// unit's duck, 1 when it did not (or a call failed), 2 for bad arguments.
#define _POSIX_C_SOURCE 200809L
#include <sharedsession.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

// Events arrive on a thread of the library's: the main thread waits on this for the unit's duck.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void on_event(uint64_t session, const char *json, void *context) {
    (void)session;
    (void)context;
    printf("  event %s\n", json);
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void check(sharedsession_status status, const char *what) {
    if (status != sharedsession_statusOk) {
        fprintf(stderr, "chost: %s: %s\n", what, sharedsession_last_error_message());
        exit(1);
    }
}

// Waits up to 10 s for the number of live ducks to be `count`.
static void wait_for_ducks(uint64_t session, int32_t count) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    int32_t ducks = -1;
    pthread_mutex_lock(&lock);
    for (;;) {
        check(sharedsession_gains(session, NULL, NULL, NULL, &ducks), "gains");
        if (ducks == count || pthread_cond_timedwait(&changed, &lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&lock);
    if (ducks != count) {
        fprintf(stderr, "chost: waited 10 s for %d ducks, there are %d\n", count, ducks);
        exit(1);
    }
}

// Plays one second: rendered at once offline, where it returns the movie's level in dBFS; in real
// time on PipeWire, where there is nothing to read (NAN).
static double play_second(uint64_t session, sharedsession_engine engine) {
    double level = NAN;
    if (engine == sharedsession_engineOffline) {
        check(sharedsession_render(session, 1000, &level), "render");
    } else {
        sleep(1);
    }
    float volume, duck, gain;
    check(sharedsession_gains(session, &volume, &duck, &gain, NULL), "gains");
    printf("  volume %.2f x duck %.2f = main gain %.3f", volume, duck, gain);
    if (!isnan(level)) printf(", movie at %.2f dBFS", level);
    printf("\n");
    return level;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);  // lines in order with the unit's, which shares stdout
    int first = 1;
    const char *forced = NULL;
    if (argc > 2 && strcmp(argv[1], "--engine") == 0) {
        forced = argv[2];
        first = 3;
    }
    if (argc - first < 2 || (forced && strcmp(forced, "offline") != 0 && strcmp(forced, "pipewire") != 0)) {
        fprintf(stderr, "usage: chost [--engine offline|pipewire] MOVIE UNIT_COMMAND...\n");
        return 2;
    }

    // The real engine, or the offline one when no sound server answers.
    uint64_t session = 0;
    sharedsession_engine engine = sharedsession_engineOffline;
    if (!forced || strcmp(forced, "pipewire") == 0) {
        if (sharedsession_start(sharedsession_enginePipewire, "CHost", &session) == sharedsession_statusOk) {
            engine = sharedsession_enginePipewire;
        } else if (forced) {
            check(sharedsession_statusEngineUnavailable, "start");
        } else {
            printf("%s\nusing the offline engine\n", sharedsession_last_error_message());
        }
    }
    if (session == 0) check(sharedsession_start(sharedsession_engineOffline, "CHost", &session), "start");
    printf("libsharedsession %s, engine: %s\n", sharedsession_version(),
           engine == sharedsession_engineOffline ? "offline" : "PipeWire");
    check(sharedsession_set_event_callback(session, on_event, NULL), "event callback");

    uint64_t lease, movie, server;
    check(sharedsession_acquire(session, sharedsession_lease_typeGeneric, "player", &lease), "acquire");
    check(sharedsession_open_main_media(session, argv[first], &movie), "open the movie");
    check(sharedsession_set_main_volume(session, 0.8f), "volume");
    printf("1. host: the movie plays\n");
    double before = play_second(session, engine);

    // Serve the session, and start the unit with the socket's path.
    char path[256];
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    snprintf(path, sizeof path, "%s/sharedsession-chost-%ld.sock", runtime ? runtime : "/tmp", (long)getpid());
    check(sharedsession_serve(session, path, &server), "serve");
    int commands[2];
    if (pipe(commands) != 0) return 1;
    char **unit = calloc((size_t)(argc - first + 2), sizeof *unit);
    int count = 0;
    for (int i = first + 1; i < argc; i++) unit[count++] = argv[i];
    unit[count++] = "--socket";
    unit[count++] = path;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, commands[0], 0);
    posix_spawn_file_actions_addclose(&actions, commands[1]);
    pid_t pid;
    if (posix_spawnp(&pid, unit[0], &actions, NULL, unit, environ) != 0) {
        fprintf(stderr, "chost: cannot start %s\n", unit[0]);
        return 1;
    }
    close(commands[0]);

    if (write(commands[1], "duck\n", 5) != 5) return 1;
    wait_for_ducks(session, 1);
    printf("2. unit: ducked the movie\n");
    double under = play_second(session, engine);
    if (write(commands[1], "leave\n", 6) != 6) return 1;
    close(commands[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    wait_for_ducks(session, 0);
    printf("3. unit: left (its duck undone)\n");
    double after = play_second(session, engine);

    float volume, duck, gain;
    check(sharedsession_gains(session, &volume, &duck, &gain, NULL), "gains");
    int restored = WIFEXITED(status) && WEXITSTATUS(status) == 0 && duck == 1.0f && gain == volume;
    if (engine == sharedsession_engineOffline) {
        printf("movie: %.2f dBFS, %.2f under the duck, %.2f after\n", before, under, after);
        restored = restored && under < before - 10 && fabs(after - before) <= 0.1;
    }
    check(sharedsession_release(server), "stop serving");
    check(sharedsession_release(movie), "close the movie");
    check(sharedsession_release(lease), "release");
    check(sharedsession_release(session), "close");
    free(unit);
    if (!restored) {
        fprintf(stderr, "chost: the movie did not come back to where it was before the unit's duck\n");
        return 1;
    }
    printf("restored: the movie is back at the host's volume\n");
    return 0;
}
