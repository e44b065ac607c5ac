// The adoption watchdog: a small process that gives adopted nodes (other clients' players) their own
// volume back when the process that ducked them ends without doing so itself: SIGKILL, a crash, an
// exit that skipped the engine's shutdown.
//
// The engine starts it once, the first time it adopts a node, by running its own executable again
// (/proc/self/exe, or /bin/true with this library preloaded when this code lives in a shared object)
// with SHAREDSESSION_WATCHDOG=1 in the environment. The constructor below sees the variable and runs
// the watchdog before the program's main, which never runs. The watchdog connects to the same daemon,
// reads the engine's lines on its standard input:
//
//   adopt ID      node ID's soft volumes are the engine's now (its duck)
//   release ID    node ID was given back (or went away): forget it
//
// It follows each adopted node's Props, and when its standard input ends (the engine's process is
// gone: the pipe's last writer closed it, however the process ended) or on SIGTERM, it sets every
// remembered node's soft volumes to its channel volumes (the user's, which the engine never writes),
// waits for the daemon to confirm (a core sync), and exits. Each node is bound as soon as it is
// adopted, so the give-back is one message per node on a live connection, not a connection made
// after the death.
#define _GNU_SOURCE
#include "CAdoptionWatchdog.h"

#include <pipewire/pipewire.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spa/param/audio/raw.h>
#include <spa/param/props.h>
#include <spa/pod/builder.h>
#include <spa/utils/result.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define WATCHDOG_ENV "SHAREDSESSION_WATCHDOG"
// The media.category the engine's client declares, which the watchdog's declares too.
#define CATEGORY_ENV "SHAREDSESSION_WATCHDOG_CATEGORY"
#define WATCHDOG_MAX_NODES 256

struct watched_node {
    uint32_t id;
    struct pw_proxy *proxy;
    struct spa_hook listener;
    /// The node's channel volumes as last reported (2 channels at 1 until its Props arrive).
    float volumes[SPA_AUDIO_MAX_CHANNELS];
    uint32_t channels;
};

struct watchdog {
    struct pw_main_loop *main_loop;
    struct pw_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_registry *registry;
    // The engine's media.category (NULL: none): a sandboxed watchdog needs Manager to write volumes.
    char *category;
    struct spa_source *input;
    struct watched_node *nodes[WATCHDOG_MAX_NODES];
    uint32_t count;
    char line[256];
    size_t line_length;
    int done_seq;
    bool giving_back;
    bool connected;
    struct timespec gave_back_at;
};

static double seconds_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void watchdog_disconnect(struct watchdog *w) {
    for (uint32_t i = 0; i < w->count; i++) {
        spa_hook_remove(&w->nodes[i]->listener);
        pw_proxy_destroy(w->nodes[i]->proxy);
        free(w->nodes[i]);
    }
    w->count = 0;
    if (w->registry) pw_proxy_destroy((struct pw_proxy *)w->registry);
    w->registry = NULL;
    if (w->core) {
        spa_hook_remove(&w->core_listener);
        pw_core_disconnect(w->core);
    }
    w->core = NULL;
    w->connected = false;
}

static void on_core_done(void *data, uint32_t id, int seq) {
    struct watchdog *w = data;
    if (id == PW_ID_CORE && w->giving_back && seq == w->done_seq) {
        fprintf(stderr, "sharedsession-watchdog: gave %u node(s) back in %.1f ms\n", w->count,
                seconds_since(&w->gave_back_at) * 1000);
        pw_main_loop_quit(w->main_loop);
    }
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    struct watchdog *w = data;
    (void)seq;
    if (id == PW_ID_CORE && res == -EPIPE) {
        // The daemon went away: so did the nodes. Connect again with the next node adopted.
        w->connected = false;
        if (w->giving_back) pw_main_loop_quit(w->main_loop);
    } else if (id != PW_ID_CORE) {
        fprintf(stderr, "sharedsession-watchdog: error on object %u: %s\n", id, message ? message : "");
    }
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = on_core_done,
    .error = on_core_error,
};

static bool watchdog_connect(struct watchdog *w) {
    if (w->connected) return true;
    watchdog_disconnect(w);
    struct pw_properties *properties =
        w->category != NULL ? pw_properties_new(PW_KEY_MEDIA_CATEGORY, w->category, NULL) : NULL;
    w->core = pw_context_connect(w->context, properties, 0);
    if (w->core == NULL) return false;
    pw_core_add_listener(w->core, &w->core_listener, &core_events, w);
    w->registry = pw_core_get_registry(w->core, PW_VERSION_REGISTRY, 0);
    w->connected = w->registry != NULL;
    return w->connected;
}

static int set_soft_volumes(struct watched_node *node) {
    uint8_t buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof buffer);
    struct spa_pod_frame frame;
    spa_pod_builder_push_object(&builder, &frame, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
    spa_pod_builder_prop(&builder, SPA_PROP_softVolumes, 0);
    spa_pod_builder_array(&builder, sizeof(float), SPA_TYPE_Float, node->channels, node->volumes);
    const struct spa_pod *pod = spa_pod_builder_pop(&builder, &frame);
    if (pod == NULL) return -ENOSPC;
    return pw_node_set_param((struct pw_node *)node->proxy, SPA_PARAM_Props, 0, pod);
}

static void on_node_param(
    void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    struct watched_node *node = data;
    (void)seq, (void)index, (void)next;
    if (id != SPA_PARAM_Props || param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props)) return;
    const struct spa_pod_object *object = (const struct spa_pod_object *)param;
    const struct spa_pod_prop *prop;
    SPA_POD_OBJECT_FOREACH(object, prop) {
        if (prop->key != SPA_PROP_channelVolumes) continue;
        uint32_t n = spa_pod_copy_array(&prop->value, SPA_TYPE_Float, node->volumes, SPA_AUDIO_MAX_CHANNELS);
        if (n > 0) node->channels = n;
    }
}

static const struct pw_node_events node_events = {
    PW_VERSION_NODE_EVENTS,
    .param = on_node_param,
};

static void forget(struct watchdog *w, uint32_t id) {
    for (uint32_t i = 0; i < w->count; i++) {
        if (w->nodes[i]->id != id) continue;
        spa_hook_remove(&w->nodes[i]->listener);
        pw_proxy_destroy(w->nodes[i]->proxy);
        free(w->nodes[i]);
        w->nodes[i] = w->nodes[--w->count];
        return;
    }
}

static void adopt(struct watchdog *w, uint32_t id) {
    if (!watchdog_connect(w)) {
        fprintf(stderr, "sharedsession-watchdog: cannot connect to the daemon: %s\n", strerror(errno));
        return;
    }
    for (uint32_t i = 0; i < w->count; i++) {
        if (w->nodes[i]->id == id) return;
    }
    if (w->count == WATCHDOG_MAX_NODES) {
        fprintf(stderr, "sharedsession-watchdog: more than %d adopted nodes; node %u is not watched\n",
                WATCHDOG_MAX_NODES, id);
        return;
    }
    struct watched_node *node = calloc(1, sizeof *node);
    if (node == NULL) return;
    node->proxy = pw_registry_bind(w->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    if (node->proxy == NULL) {
        free(node);
        return;
    }
    node->id = id;
    node->channels = 2;
    node->volumes[0] = node->volumes[1] = 1;
    pw_node_add_listener((struct pw_node *)node->proxy, &node->listener, &node_events, node);
    uint32_t ids[] = {SPA_PARAM_Props};
    pw_node_subscribe_params((struct pw_node *)node->proxy, ids, 1);
    w->nodes[w->count++] = node;
}

/// Gives every node its channel volumes back as its soft volumes and waits for the daemon's confirmation.
static void give_back(struct watchdog *w) {
    if (w->giving_back) return;
    w->giving_back = true;
    clock_gettime(CLOCK_MONOTONIC, &w->gave_back_at);
    if (!w->connected || w->count == 0) {
        pw_main_loop_quit(w->main_loop);
        return;
    }
    for (uint32_t i = 0; i < w->count; i++) set_soft_volumes(w->nodes[i]);
    w->done_seq = pw_core_sync(w->core, PW_ID_CORE, 0);
}

static void handle_line(struct watchdog *w, const char *line) {
    unsigned id = 0;
    if (sscanf(line, "adopt %u", &id) == 1) {
        adopt(w, id);
    } else if (sscanf(line, "release %u", &id) == 1) {
        forget(w, id);
    } else if (line[0] != '\0') {
        fprintf(stderr, "sharedsession-watchdog: unknown line '%s'\n", line);
    }
}

static void on_input(void *data, int fd, uint32_t mask) {
    struct watchdog *w = data;
    char buffer[512];
    ssize_t count = (mask & SPA_IO_IN) ? read(fd, buffer, sizeof buffer) : 0;
    if (count < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (count <= 0) {
        // The engine's process is gone (or closed the pipe in its shutdown): give everything back.
        pw_loop_update_io(w->loop, w->input, 0);
        give_back(w);
        return;
    }
    for (ssize_t i = 0; i < count; i++) {
        if (buffer[i] == '\n') {
            w->line[w->line_length] = '\0';
            handle_line(w, w->line);
            w->line_length = 0;
        } else if (w->line_length + 1 < sizeof w->line) {
            w->line[w->line_length++] = buffer[i];
        }
    }
}

static void on_terminate(void *data, int signal_number) {
    (void)signal_number;
    give_back(data);
}

static int watchdog_main(void) {
    // Terminal signals belong to the host's process group, not to this one (it has a session of its own).
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    unsetenv(WATCHDOG_ENV);
    unsetenv("LD_PRELOAD");
    pw_init(NULL, NULL);
    struct watchdog *w = calloc(1, sizeof *w);
    if (w == NULL) return 1;
    const char *category = getenv(CATEGORY_ENV);
    if (category != NULL && category[0] != '\0') w->category = strdup(category);
    unsetenv(CATEGORY_ENV);
    w->main_loop = pw_main_loop_new(NULL);
    if (w->main_loop == NULL) return 1;
    w->loop = pw_main_loop_get_loop(w->main_loop);
    w->context = pw_context_new(w->loop, NULL, 0);
    if (w->context == NULL) return 1;
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    w->input = pw_loop_add_io(w->loop, 0, SPA_IO_IN | SPA_IO_HUP | SPA_IO_ERR, false, on_input, w);
    pw_loop_add_signal(w->loop, SIGTERM, on_terminate, w);
    // Connected before the engine adopts anything, so the first node is bound at once.
    bool connected = watchdog_connect(w);
    // One line on the status pipe: the engine waits for it to know the watchdog runs (and is not the
    // host's own main started again by mistake).
    const char *ready = connected ? "ready\n" : "unconnected\n";
    ssize_t written = write(1, ready, strlen(ready));
    (void)written;
    close(1);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0 && devnull != 1) {
        dup2(devnull, 1);
        close(devnull);
    }
    pw_main_loop_run(w->main_loop);
    watchdog_disconnect(w);
    return 0;
}

// Kept in the same file as CAdoptionWatchdog_spawn: a linker may leave out an object file nothing calls
// into (a static archive's member), and the engine's call to spawn is what keeps this constructor in
// every executable that can start the watchdog.
__attribute__((constructor)) static void CAdoptionWatchdog_entry(void) {
    const char *value = getenv(WATCHDOG_ENV);
    if (value == NULL || strcmp(value, "1") != 0) return;
    _exit(watchdog_main());
}

pid_t CAdoptionWatchdog_spawn(const char *remoteName, const char *mediaCategory, int *commandFD, char *failure,
                              size_t failureSize) {
    int commands[2], status[2];
    failure[0] = '\0';
    if (pipe2(commands, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
        snprintf(failure, failureSize, "pipe: %s", strerror(errno));
        return -1;
    }
    // Which file holds this code: the executable itself (a static link, SwiftPM's way), or a shared
    // object, which a trivial program then preloads.
    Dl_info info;
    const char *program = "/proc/self/exe";
    char preload[4096] = "";
    if (dladdr((void *)CAdoptionWatchdog_spawn, &info) != 0 && info.dli_fname != NULL &&
        strstr(info.dli_fname, ".so") != NULL) {
        program = "/bin/true";
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", info.dli_fname);
    }
    // The environment: the caller's, with the watchdog's switch and the daemon's socket name.
    size_t count = 0;
    while (environ[count]) count++;
    char **envp = calloc(count + 5, sizeof *envp);
    char remote[512], category[128];
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (strncmp(environ[i], WATCHDOG_ENV "=", strlen(WATCHDOG_ENV) + 1) == 0) continue;
        if (remoteName && strncmp(environ[i], "PIPEWIRE_REMOTE=", 16) == 0) continue;
        if (strncmp(environ[i], CATEGORY_ENV "=", strlen(CATEGORY_ENV) + 1) == 0) continue;
        if (preload[0] && strncmp(environ[i], "LD_PRELOAD=", 11) == 0) continue;
        envp[n++] = environ[i];
    }
    envp[n++] = WATCHDOG_ENV "=1";
    if (remoteName) {
        snprintf(remote, sizeof remote, "PIPEWIRE_REMOTE=%s", remoteName);
        envp[n++] = remote;
    }
    if (mediaCategory) {
        snprintf(category, sizeof category, CATEGORY_ENV "=%s", mediaCategory);
        envp[n++] = category;
    }
    if (preload[0]) envp[n++] = preload;
    envp[n] = NULL;

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, commands[0], 0);
    posix_spawn_file_actions_adddup2(&actions, status[1], 1);
    // Nothing else of the host's: a socket or pipe the watchdog kept open would hide its end from others.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_init(&attributes);
    // A session of its own: a terminal's Ctrl-C or hang-up for the host's group does not reach it.
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
    char *argv[] = {"sharedsession-watchdog", NULL};
    pid_t pid = -1;
    int result = posix_spawn(&pid, program, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    free(envp);
    close(commands[0]);
    close(status[1]);
    if (result != 0) {
        snprintf(failure, failureSize, "cannot run %s: %s", program, strerror(result));
        close(commands[1]);
        close(status[0]);
        return -1;
    }
    // Wait for its ready line (a connection to the daemon is a round trip: a few ms).
    char answer[32] = "";
    size_t got = 0;
    struct pollfd poller = {.fd = status[0], .events = POLLIN};
    while (got + 1 < sizeof answer && strchr(answer, '\n') == NULL && poll(&poller, 1, 2000) > 0) {
        ssize_t r = read(status[0], answer + got, sizeof answer - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
        answer[got] = '\0';
    }
    close(status[0]);
    if (strcmp(answer, "ready\n") != 0) {
        snprintf(failure, failureSize, "%s did not start as the watchdog (it answered '%.*s')", program,
                 (int)strcspn(answer, "\n"), answer);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(commands[1]);
        return -1;
    }
    fcntl(commands[1], F_SETFL, O_NONBLOCK);
    *commandFD = commands[1];
    return pid;
}

int CAdoptionWatchdog_send(int commandFD, const char *line) {
    size_t length = strlen(line);
    ssize_t written = write(commandFD, line, length);
    return written == (ssize_t)length ? 0 : -errno;
}

void CAdoptionWatchdog_stop(pid_t pid, int commandFD) {
    close(commandFD);
    // It gives back what it still holds and exits at once; reap it so no zombie is left.
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, NULL, WNOHANG) != 0) return;
        usleep(5000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
