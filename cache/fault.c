/* AUTOGRAPH_FAULT: testing only. "point:K,..." makes every K-th call of that graph operation
 * fail as if the driver had refused it (K=1: every call). Points: add_node, instantiate,
 * upload, update, set_params, launch. The engine must then fall back to eager launches with
 * unchanged results -- which is what the fault tests check. The spec's parser is
 * policy/faultspec.c; this file is only the injection. */
#include <pthread.h>
#include <stdatomic.h>

#include "policy/faultspec.h"
#include "policy/options.h"
#include "cache/fault.h"

_Static_assert(AG_F_COUNT == AG_FAULT_NPOINTS, "policy/faultspec.c names every fault point");

static long g_every[AG_F_COUNT];
static atomic_long g_calls[AG_F_COUNT];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void load(void)
{
    ag_fault_spec_parse(ag_opt_str(AG_OPT_FAULT), g_every);
}

int ag_fault(enum ag_fault_point p)
{
    pthread_once(&g_once, load);
    if (!g_every[p])
        return 0;
    return (atomic_fetch_add(&g_calls[p], 1) + 1) % g_every[p] == 0;
}
