// pw-xruns: counts, per node, the graph cycles in which the node had not finished when the driver
// started the next one: the ERR column of pw-top (a profiler block whose status is not FINISHED),
// without a terminal. Also reports the driver's own xrun counter.
//
//   pw-xruns SECONDS [NAME-PREFIX...]
// prints one line per node seen: "node ID NAME cycles=N err=N triggered=N awake=N nottriggered=N
// busy_us_max=X", then "total err=N nodes=N driver_xruns=N". Only nodes whose name starts with one
// of the prefixes are listed (all when none is given).
// Per graph cycle it notes whether a node of the first prefix and one of the second erred. Capture
// nodes of the first prefix (names ending ".voice" or ".monitor": they wait for a source upstream,
// and a playback peer has none) are counted apart, in "capture=N capture_only=N".
#include <pipewire/impl.h>
#include <pipewire/extensions/profiler.h>
#include <spa/param/profiler.h>
#include <spa/pod/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 512

struct counted {
    uint32_t id;
    char name[128];
    uint64_t cycles, errors, by_status[4];
    int64_t busy_max;
};

static struct counted nodes[MAX_NODES];
static int node_count;
static struct pw_main_loop *loop;
static struct pw_registry *registry;
static struct pw_proxy *profiler;
static struct spa_hook registry_hook, profiler_hook;
static uint32_t driver_xruns_first, driver_xruns_last;
// Per graph cycle: which of the first two prefixes had a node that erred, and late driver cycles.
static char **prefixes;
static int prefix_count;
static uint64_t graph_cycles, cycles_err[2], cycles_err_both, late_cycles, cycles_capture, cycles_capture_only;
static int cycle_flags;
static int64_t nominal_period;
static int have_driver_xruns;

static struct counted *lookup(uint32_t id) {
    for (int i = 0; i < node_count; i++)
        if (nodes[i].id == id) return &nodes[i];
    return NULL;
}

static int ends_with(const char *name, const char *suffix) {
    size_t length = strlen(name), tail = strlen(suffix);
    return length >= tail && strcmp(name + length - tail, suffix) == 0;
}

static int is_capture(const char *name) { return ends_with(name, ".voice") || ends_with(name, ".monitor"); }

static void count_block(const struct spa_pod *pod) {
    int32_t id = 0, status = 0;
    const char *name = NULL;
    int64_t prev_signal = 0, signal = 0, awake = 0, finish = 0;
    struct spa_fraction latency = {0, 0};
    if (spa_pod_parse_struct(pod, SPA_POD_Int(&id), SPA_POD_String(&name), SPA_POD_Long(&prev_signal),
            SPA_POD_Long(&signal), SPA_POD_Long(&awake), SPA_POD_Long(&finish), SPA_POD_Int(&status),
            SPA_POD_Fraction(&latency)) < 0)
        return;
    struct counted *n = lookup((uint32_t)id);
    if (n == NULL) return;
    if (status != 3)
        for (int i = 0; i < prefix_count && i < 2; i++)
            if (strncmp(n->name, prefixes[i], strlen(prefixes[i])) == 0)
                cycle_flags |= (i == 0 && is_capture(n->name)) ? 4 : 1 << i;
    n->cycles++;
    if (status != 3) n->errors++;
    if (status >= 0 && status < 4) n->by_status[status]++;
    if (status == 3 && finish > awake && finish - awake > n->busy_max) n->busy_max = finish - awake;
}

static void on_profile(void *data, const struct spa_pod *pod) {
    (void)data;
    struct spa_pod *o;
    SPA_POD_STRUCT_FOREACH(pod, o) {
        if (!spa_pod_is_object_type(o, SPA_TYPE_OBJECT_Profiler)) continue;
        struct spa_pod_prop *p;
        cycle_flags = 0;
        SPA_POD_OBJECT_FOREACH((struct spa_pod_object *)o, p) {
            if (p->key == SPA_PROFILER_info) {
                int64_t count = 0;
                float load[3];
                int32_t xruns = 0;
                if (spa_pod_parse_struct(&p->value, SPA_POD_Long(&count), SPA_POD_Float(&load[0]),
                        SPA_POD_Float(&load[1]), SPA_POD_Float(&load[2]), SPA_POD_Int(&xruns)) >= 0) {
                    if (!have_driver_xruns) driver_xruns_first = (uint32_t)xruns;
                    have_driver_xruns = 1;
                    driver_xruns_last = (uint32_t)xruns;
                }
            } else if (p->key == SPA_PROFILER_clock) {
                int32_t flags = 0, id = 0;
                const char *name = NULL;
                int64_t nsec = 0, position = 0, duration = 0, delay = 0, next = 0;
                struct spa_fraction rate = {0, 0};
                double diff = 0;
                if (spa_pod_parse_struct(&p->value, SPA_POD_Int(&flags), SPA_POD_Int(&id), SPA_POD_String(&name),
                        SPA_POD_Long(&nsec), SPA_POD_Fraction(&rate), SPA_POD_Long(&position),
                        SPA_POD_Long(&duration), SPA_POD_Long(&delay), SPA_POD_Double(&diff),
                        SPA_POD_Long(&next)) >= 0 && rate.denom != 0)
                    nominal_period = duration * 1000000000LL * rate.num / rate.denom;
            } else if (p->key == SPA_PROFILER_driverBlock) {
                int32_t id = 0, status = 0;
                const char *name = NULL;
                int64_t prev_signal = 0, signal = 0, awake = 0, finish = 0;
                struct spa_fraction latency = {0, 0};
                if (spa_pod_parse_struct(&p->value, SPA_POD_Int(&id), SPA_POD_String(&name),
                        SPA_POD_Long(&prev_signal), SPA_POD_Long(&signal), SPA_POD_Long(&awake),
                        SPA_POD_Long(&finish), SPA_POD_Int(&status), SPA_POD_Fraction(&latency)) >= 0 &&
                    nominal_period > 0 && prev_signal > 0 && signal - prev_signal > nominal_period * 3 / 2)
                    late_cycles++;
            } else if (p->key == SPA_PROFILER_followerBlock) {
                count_block(&p->value);
            }
        }
        graph_cycles++;
        if (cycle_flags & 1) cycles_err[0]++;
        if (cycle_flags & 2) cycles_err[1]++;
        if ((cycle_flags & 3) == 3) cycles_err_both++;
        if (cycle_flags & 4) cycles_capture++;
        if (cycle_flags == 4) cycles_capture_only++;
    }
}

static const struct pw_profiler_events profiler_events = {PW_VERSION_PROFILER_EVENTS, .profile = on_profile};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
    const struct spa_dict *props) {
    (void)data;
    (void)permissions;
    (void)version;
    if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0 && node_count < MAX_NODES) {
        const char *name = props ? spa_dict_lookup(props, PW_KEY_NODE_NAME) : NULL;
        struct counted *n = &nodes[node_count++];
        memset(n, 0, sizeof *n);
        n->id = id;
        snprintf(n->name, sizeof n->name, "%s", name ? name : "?");
    } else if (strcmp(type, PW_TYPE_INTERFACE_Profiler) == 0 && profiler == NULL) {
        profiler = pw_registry_bind(registry, id, type, PW_VERSION_PROFILER, 0);
        if (profiler) pw_proxy_add_object_listener(profiler, &profiler_hook, &profiler_events, NULL);
    }
}

static const struct pw_registry_events registry_events = {PW_VERSION_REGISTRY_EVENTS, .global = on_global};

static void on_timeout(void *data, uint64_t expirations) {
    (void)data;
    (void)expirations;
    pw_main_loop_quit(loop);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: pw-xruns SECONDS [NAME-PREFIX...]\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    prefixes = argv + 2;
    prefix_count = argc - 2;
    pw_init(NULL, NULL);
    loop = pw_main_loop_new(NULL);
    struct pw_context *context = pw_context_new(pw_main_loop_get_loop(loop), NULL, 0);
    pw_context_load_module(context, PW_EXTENSION_MODULE_PROFILER, NULL, NULL);
    struct pw_core *core = pw_context_connect(context, NULL, 0);
    if (core == NULL) {
        fprintf(stderr, "pw-xruns: cannot connect\n");
        return 1;
    }
    registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    pw_registry_add_listener(registry, &registry_hook, &registry_events, NULL);
    struct spa_source *timer = pw_loop_add_timer(pw_main_loop_get_loop(loop), on_timeout, NULL);
    struct timespec value = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)}, interval = {0, 0};
    pw_loop_update_timer(pw_main_loop_get_loop(loop), timer, &value, &interval, false);
    pw_main_loop_run(loop);
    if (profiler == NULL) {
        fprintf(stderr, "pw-xruns: the daemon has no profiler\n");
        return 1;
    }
    uint64_t total = 0;
    int listed = 0;
    for (int i = 0; i < node_count; i++) {
        struct counted *n = &nodes[i];
        int match = argc == 2;
        for (int a = 2; a < argc; a++)
            if (strncmp(n->name, argv[a], strlen(argv[a])) == 0) match = 1;
        if (!match || n->cycles == 0) continue;
        listed++;
        total += n->errors;
        printf("node %u %s cycles=%llu err=%llu nottriggered=%llu triggered=%llu awake=%llu busy_us_max=%.1f\n",
            n->id, n->name, (unsigned long long)n->cycles, (unsigned long long)n->errors,
            (unsigned long long)n->by_status[0], (unsigned long long)n->by_status[1],
            (unsigned long long)n->by_status[2], n->busy_max / 1000.0);
    }
    printf("cycles=%llu late_driver_cycles=%llu cycles_with_err: first=%llu second=%llu both=%llu\n",
        (unsigned long long)graph_cycles, (unsigned long long)late_cycles, (unsigned long long)cycles_err[0],
        (unsigned long long)cycles_err[1], (unsigned long long)cycles_err_both);
    printf("total err=%llu nodes=%d driver_xruns=%u capture=%llu capture_only=%llu\n", (unsigned long long)total,
        listed, have_driver_xruns ? driver_xruns_last - driver_xruns_first : 0, (unsigned long long)cycles_capture,
        (unsigned long long)cycles_capture_only);
    pw_proxy_destroy(profiler);
    pw_proxy_destroy((struct pw_proxy *)registry);
    pw_core_disconnect(core);
    pw_context_destroy(context);
    pw_main_loop_destroy(loop);
    return 0;
}
