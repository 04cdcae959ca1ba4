/* The option table (one line of doc each), parsing and the once-only warnings. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "faultspec.h"
#include "log.h"

static const char *const benefit_names[] = { "measure", "always", "now", NULL };
/* the order of enum ag_copy_mode (cache/copy.h) */
static const char *const copy_node_names[] = { "off", "pinned", "all", NULL };

static int valid_stats(const char *s)
{
    size_t n = strlen(s);
    return !strcmp(s, "0") || !strcmp(s, "1") || (n > 5 && !strcmp(s + n - 5, ".json"));
}

static int valid_path(const char *s)
{
    for (const char *p = s; *p; p++)
        if (!isprint((unsigned char)*p))
            return 0;
    return 1;
}

static int valid_trace(const char *s)
{
    return valid_path(s) && strcmp(s, "0") && strcmp(s, "1"); /* a file name, not a switch */
}

static int valid_globs(const char *s)
{
    /* comma-separated fnmatch patterns: anything printable, no empty list items */
    if (!*s)
        return 1;
    for (const char *p = s; *p; p++)
        if (!isprint((unsigned char)*p) || (*p == ',' && (p == s || p[1] == ',' || !p[1])))
            return 0;
    return 1;
}

const ag_opt_desc ag_opt_table[AG_OPT_COUNT] = {
    [AG_OPT_DISABLE] = { "DISABLE", AG_T_BOOL, "0", 0, 1, NULL, NULL,
                         "1: pass every call straight through (launches are only counted)" },
    [AG_OPT_MIN_REPEATS] = { "MIN_REPEATS", AG_T_INT, "3", 1, 1000000, NULL, NULL,
                             "sightings of a launch sequence before it is turned into a graph "
                             "(one fewer for a loop body of 32 launches or more, back to back)" },
    [AG_OPT_MAX_NODES] = { "MAX_NODES", AG_T_INT, "1024", 2, AG_MAX_NODES_LIMIT, NULL, NULL,
                           "longest sequence held as one template (it goes to the GPU in pieces); "
                           "longer stretches without an ordering point are cut into chunks" },
    [AG_OPT_MAX_GRAPHS] = { "MAX_GRAPHS", AG_T_INT, "512", 1, 1000000, NULL, NULL,
                            "graphs kept at once in the whole process (least recently used go)" },
    [AG_OPT_MAX_GRAPH_MEM] = { "MAX_GRAPH_MEM", AG_T_SIZE, "256M", 1 << 20, 1LL << 40, NULL,
                               NULL,
                               "device memory the cached graphs may use (estimated; K/M/G)" },
    [AG_OPT_MAX_HOLD_US] = { "MAX_HOLD_US", AG_T_INT, "2000", 10, 10000000, NULL, NULL,
                             "longest time a launch is held back (a piece of a sequence goes to the GPU "
                             "as soon as it is complete) before it goes out eagerly" },
    [AG_OPT_PIECE] = { "PIECE", AG_T_INT, "0", 0, 4096, NULL, NULL,
                       "0: graph pieces sized from measured costs; N: a piece every N launches "
                       "(testing and tuning)" },
    [AG_OPT_LOG] = { "LOG", AG_T_ENUM, "warn", 0, 0, ag_log_level_names, NULL,
                     "what is printed on stderr: error, warn, info, debug or trace" },
    [AG_OPT_LOG_FILE] = { "LOG_FILE", AG_T_STR, "", 0, 0, NULL, valid_path,
                          "log (and stats summary) into this file, not stderr; %p: pid, %h: host" },
    [AG_OPT_STATS] = { "STATS", AG_T_STR, "0", 0, 0, NULL, valid_stats,
                       "1: a summary on stderr at exit; a path ending in .json (%p: pid): also JSON" },
    [AG_OPT_ALLOW] = { "ALLOW", AG_T_STR, "", 0, 0, NULL, valid_globs,
                       "comma-separated kernel-name globs: only these may be graphed" },
    [AG_OPT_DENY] = { "DENY", AG_T_STR, "", 0, 0, NULL, valid_globs,
                      "comma-separated kernel-name globs never graphed (wins over ALLOW)" },
    [AG_OPT_PROFILE] = { "PROFILE", AG_T_STR, "", 0, 0, NULL, NULL,
                         "file of learned sequences: loaded at start, saved at exit" },
    [AG_OPT_BENEFIT] = { "BENEFIT", AG_T_ENUM, "measure", 0, 0, benefit_names, NULL,
                         "measure: keep graphs only where replay beats eager; always: keep all; now: measure "
                         "from a sequence's first repeats, payback or not (tests)" },
    [AG_OPT_COPY_NODES] = { "COPY_NODES", AG_T_ENUM, "pinned", 0, 0, copy_node_names, NULL,
                            "async memsets/copies in graphs: pinned (device and pinned host "
                            "memory), all (also into pageable host memory), off" },
    [AG_OPT_READBACK_NODES] = { "READBACK_NODES", AG_T_BOOL, "0", 0, 1, NULL, NULL,
                                "1: a device-to-host copy that ends a sequence is a node of "
                                "its graph; 0: it goes out right after the graph (a copy node "
                                "costs the GPU ~6 us more)" },
    [AG_OPT_FAULT] = { "FAULT", AG_T_STR, "", 0, 0, NULL, ag_fault_spec_valid,
                       "testing only: make graph calls fail, e.g. instantiate:1,update:3" },
    [AG_OPT_TRACE] = { "TRACE", AG_T_STR, "", 0, 0, NULL, valid_trace,
                       "record every call into this file (%p: pid, %h: host; docs/TRACE.md); "
                       "the program then runs eagerly, nothing graphed" },
    [AG_OPT_TRACE_GPU] = { "TRACE_GPU", AG_T_INT, "0", 0, 1000000, NULL, NULL,
                           "1: the trace also holds each launch's, copy's and graph launch's "
                           "GPU time (CUDA events around it); N > 1: only one launch in N of "
                           "each kernel and launch dimensions is timed (copies and graph "
                           "launches: each)" },
    [AG_OPT_WORKER] = { "WORKER", AG_T_BOOL, "1", 0, 1, NULL, NULL,
                        "1: graphs are built on a thread of the library while their sequence "
                        "runs eagerly; 0: on the launching thread, at the first replay" },
};

static struct {
    long long num;
    const char *str;
    const char *raw;
    int invalid;
} g_val[AG_OPT_COUNT];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_int g_ready; /* acquire/release: see load() and ensure() */

static int parse_bool(const char *s, long long *out)
{
    static const char *const yes[] = { "1", "true", "yes", "on" }, *const no[] = { "0", "false",
                                                                                     "no", "off" };
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) { *out = 1; return 0; }
        if (!strcasecmp(s, no[i])) { *out = 0; return 0; }
    }
    return -1;
}

static int parse_int(const char *s, int sized, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno)
        return -1;
    if (sized && v < 0)
        return -1; /* sizes are never negative (and must not overflow below) */
    if (sized && *end) {
        long long mul = 1;
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1LL << 10; break;
        case 'M': mul = 1LL << 20; break;
        case 'G': mul = 1LL << 30; break;
        default: return -1;
        }
        end++;
        if (toupper((unsigned char)*end) == 'B' || toupper((unsigned char)*end) == 'I')
            end += (toupper((unsigned char)end[0]) == 'I' && toupper((unsigned char)end[1]) == 'B') ? 2 : 1;
        if (v > (1LL << 62) / mul)
            return -1;
        v *= mul;
    }
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int ag_opt_parse(ag_opt_id id, const char *s, long long *num, const char **str)
{
    const ag_opt_desc *d = &ag_opt_table[id];
    long long v = 0;
    *str = s;
    switch (d->type) {
    case AG_T_BOOL:
        if (parse_bool(s, &v))
            return -1;
        break;
    case AG_T_INT:
    case AG_T_SIZE:
        /* TRACE_GPU was a boolean: its words still mean 0 and 1 */
        if (id == AG_OPT_TRACE_GPU && !parse_bool(s, &v))
            break;
        if (parse_int(s, d->type == AG_T_SIZE, &v) || v < d->min || v > d->max)
            return -1;
        break;
    case AG_T_ENUM:
        for (v = 0; d->names[v] && strcasecmp(d->names[v], s); v++)
            ;
        if (!d->names[v])
            return -1;
        break;
    case AG_T_STR:
        if (d->valid && !d->valid(s))
            return -1;
        break;
    }
    *num = v;
    return 0;
}

/* Once per load, at info: the options that differ from their defaults. */
static void announce(void)
{
    char line[900];
    size_t used = 0;
    for (int i = 0; i < AG_OPT_COUNT; i++) {
        long long def;
        const char *defs;
        if (!g_val[i].raw || g_val[i].invalid ||
            ag_opt_parse((ag_opt_id)i, ag_opt_table[i].def, &def, &defs))
            continue;
        if (ag_opt_table[i].type == AG_T_STR ? !strcmp(g_val[i].str, defs) : g_val[i].num == def)
            continue;
        int w = snprintf(line + used, sizeof line - used, "%s%s=%s (default %s)",
                         used ? ", " : "", ag_opt_table[i].name, g_val[i].raw,
                         *ag_opt_table[i].def ? ag_opt_table[i].def : "\"\"");
        if (w < 0 || (size_t)w >= sizeof line - used)
            break;
        used += (size_t)w;
    }
    if (used)
        ag_log(AG_LOG_INFO, "options: %s", line);
}

static atomic_int g_announce = 1;

void ag_options_set_announce(int on)
{
    atomic_store(&g_announce, on);
}

static void read_one(int i)
{
    char name[64];
    strcpy(name, "AUTOGRAPH_");
    strncat(name, ag_opt_table[i].name, sizeof name - 11);
    const char *s = getenv(name);
    g_val[i].raw = s;
    if (!s)
        return;
    long long num;
    const char *str;
    if (ag_opt_parse((ag_opt_id)i, s, &num, &str) == 0) {
        g_val[i].num = num;
        g_val[i].str = str;
    } else {
        g_val[i].invalid = 1;
        ag_log(AG_LOG_WARN, "invalid %s=\"%s\"; using the default %s", name, s,
               *ag_opt_table[i].def ? ag_opt_table[i].def : "\"\"");
    }
}

static int g_launch_blocking;

static void load(void)
{
    /* defaults first */
    for (int i = 0; i < AG_OPT_COUNT; i++) {
        g_val[i].invalid = 0;
        g_val[i].raw = NULL;
        ag_opt_parse((ag_opt_id)i, ag_opt_table[i].def, &g_val[i].num, &g_val[i].str);
    }
    /* the log's settings first: they decide whether and where the other warnings go */
    ag_log_configure(AG_LOG_WARN, NULL);
    read_one(AG_OPT_LOG);
    ag_log_configure((int)g_val[AG_OPT_LOG].num, NULL);
    read_one(AG_OPT_LOG_FILE);
    ag_log_configure((int)g_val[AG_OPT_LOG].num, g_val[AG_OPT_LOG_FILE].str);
    for (int i = 0; i < AG_OPT_COUNT; i++)
        if (i != AG_OPT_LOG && i != AG_OPT_LOG_FILE)
            read_one(i);
    const char *lb = getenv("CUDA_LAUNCH_BLOCKING");
    g_launch_blocking = lb && strtol(lb, NULL, 10) != 0;
    if (atomic_load(&g_announce))
        announce();
    /* release: a reader that sees g_ready sees every value above */
    atomic_store_explicit(&g_ready, 1, memory_order_release);
}

static inline void ensure(void)
{
    if (__builtin_expect(!atomic_load_explicit(&g_ready, memory_order_acquire), 0))
        pthread_once(&g_once, load);
}

long long ag_opt(ag_opt_id id)
{
    ensure();
    return g_val[id].num;
}

const char *ag_opt_str(ag_opt_id id)
{
    ensure();
    return g_val[id].str ? g_val[id].str : "";
}

const char *ag_opt_raw(ag_opt_id id)
{
    ensure();
    return g_val[id].raw;
}

int ag_opt_launch_blocking(void)
{
    ensure();
    return g_launch_blocking;
}

int ag_opt_invalid(ag_opt_id id)
{
    ensure();
    return g_val[id].invalid;
}

void ag_options_reload(void)
{
    ensure();
    atomic_store_explicit(&g_ready, 0, memory_order_relaxed);
    load();
}
