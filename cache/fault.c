/* AUTOGRAPH_FAULT: testing only. "point:K,..." makes every K-th call of that graph operation
 * fail as if the driver had refused it (K=1: every call). Points: add_node, instantiate,
 * upload, update, set_params, launch. The engine must then fall back to eager launches with
 * unchanged results -- which is what the fault tests check. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "policy/options.h"
#include "cache/graph.h"

static const char *const names[AG_F_COUNT] = { "add_node", "instantiate", "upload",
                                               "update",   "set_params",  "launch" };
static long g_every[AG_F_COUNT];
static atomic_long g_calls[AG_F_COUNT];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Parses the spec; with `every` NULL it only checks it. */
static int parse(const char *s, long *every)
{
    while (*s) {
        size_t n = strcspn(s, ":,");
        int p;
        for (p = 0; p < AG_F_COUNT && (strlen(names[p]) != n || strncmp(names[p], s, n)); p++)
            ;
        if (p == AG_F_COUNT)
            return -1;
        s += n;
        long k = 1;
        if (*s == ':') {
            char *end;
            k = strtol(s + 1, &end, 10);
            if (end == s + 1 || k < 1)
                return -1;
            s = end;
        }
        if (every)
            every[p] = k;
        if (*s == ',' && s[1])
            s++;
        else if (*s)
            return -1;
    }
    return 0;
}

int ag_fault_spec_valid(const char *s)
{
    return parse(s, NULL) == 0;
}

static void load(void)
{
    parse(ag_opt_str(AG_OPT_FAULT), g_every);
}

int ag_fault(enum ag_fault_point p)
{
    pthread_once(&g_once, load);
    if (!g_every[p])
        return 0;
    return (atomic_fetch_add(&g_calls[p], 1) + 1) % g_every[p] == 0;
}
