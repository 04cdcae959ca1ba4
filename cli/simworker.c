/* The replay model's worker (cache/worker.h, in place of cache/worker.c): no thread, but a
 * queue of build requests that the simulator runs on a clock of the worker's own. */
/* A request waits from its submission (the application's simulated time then); the worker takes
 * requests in order, each when it is free and the request is there, and builds it with its
 * driver costs on its own clock (off the application's critical path, as the watchdog's
 * flushes are); the graph is published (ag_build_finish) at the moment the build ends, between
 * two traced calls. What is not modelled: the worker's driver calls contending with the
 * application's for the driver, and the CPU it takes (docs/MODEL.md). */
#include <stdlib.h>

#include "policy/options.h"
#include "cache/graph.h"
#include "cache/params.h"
#include "cache/upload.h"
#include "cache/worker.h"
#include "simdrv.h"

typedef struct job {
    ag_build_req *q;
    uint64_t t; /* submitted (the application's clock) */
    struct job *next;
} job;

static job *g_head, *g_tail;
static job *g_building;   /* built, published at g_free */
static uint64_t g_free;   /* when the worker is next free (g_building's build ends) */
static int g_stopped;
/* Layout probes (params.c), as cache/worker.c has them: asked of the driver on the worker
 * once they are due (params.c: where the host waits for the GPU, or a function was seen 32
 * times meanwhile); a job without a request (q NULL) asks every queued one. */
static int g_probe_job;

/* The probes go to the front of the queue: a template may wait for them. */
static void wake_for_probes(void)
{
    if (g_probe_job || g_stopped)
        return;
    job *j = malloc(sizeof *j);
    if (!j)
        return;
    j->q = NULL;
    j->t = sim_H;
    j->next = g_head;
    g_head = j;
    if (!g_tail)
        g_tail = j;
    g_probe_job = 1;
}

void ag_worker_start(void (*arm)(void))
{
    (void)arm; /* (the model's process has no exit to be ready for) */
    if (ag_opt(AG_OPT_WORKER) && !g_stopped)
        ag_layout_async(wake_for_probes); /* layouts are asked about on the worker from now on */
}

int ag_worker_on(void)
{
    return ag_opt(AG_OPT_WORKER) && !g_stopped;
}

int ag_worker_submit(ag_build_req *q)
{
    job *j = g_stopped ? NULL : malloc(sizeof *j);
    if (!j)
        return -1;
    j->q = q;
    j->t = sim_H;
    j->next = NULL;
    if (g_tail)
        g_tail->next = j;
    else
        g_head = j;
    g_tail = j;
    return 0;
}

/* The next thing the worker does, and when: publish the build under way, or begin the next
 * request. 0 when there is nothing. */
static int next_event(uint64_t *at)
{
    if (g_building) {
        *at = g_free;
        return 1;
    }
    if (!g_head)
        return 0;
    *at = g_head->t > g_free ? g_head->t : g_free;
    return 1;
}

/* Does it, with the clock at that moment and off the critical path. */
static void do_event(uint64_t at)
{
    uint64_t saved = sim_H;
    int off = sim_off_critical;
    sim_H = at;
    sim_off_critical = 1;
    if (g_building) {
        job *j = g_building;
        g_building = NULL;
        ag_build_finish(j->q, 1);
        free(j);
    } else {
        job *j = g_head;
        if (!(g_head = j->next))
            g_tail = NULL;
        if (!j->q) { /* layout probes: their answers are published as each is asked */
            g_probe_job = 0;
            while (ag_layout_probe_pending())
                ;
            g_free = sim_H;
            free(j);
        } else {
            ag_build_run(j->q, ag_upload_stream(ag_build_ctx(j->q)));
            g_building = j;
            g_free = sim_H;
        }
    }
    sim_off_critical = off;
    sim_H = saved;
}

void sim_worker_run(uint64_t until)
{
    uint64_t at;
    while (next_event(&at) && at <= until)
        do_event(at);
}

/* The build under way ends (published), the queued requests are dropped: as the thread's
 * quiesce waits for the one it runs and drops the rest. */
static void drain(void)
{
    if (g_building)
        do_event(g_free > sim_H ? g_free : sim_H);
    while (g_head) {
        job *j = g_head;
        if (!(g_head = j->next))
            g_tail = NULL;
        if (j->q)
            ag_build_finish(j->q, 0);
        free(j);
    }
    g_probe_job = 0;
}

void ag_worker_quiesce(int forget_streams)
{
    drain();
    if (forget_streams)
        ag_upload_streams_forget();
}

void ag_worker_stop(void)
{
    ag_layout_async(NULL);
    drain();
    g_stopped = 1;
}

void ag_worker_forked(void)
{
    g_stopped = 1;
}

